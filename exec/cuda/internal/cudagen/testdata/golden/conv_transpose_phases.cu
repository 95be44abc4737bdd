// launch loom_conv_transpose_gemm_797ce70719c3fc64 grid=[4 1 1] block=[256 1 1] shared=8320 args=[in0 in1 out]
// launch loom_conv_transpose_gemm_1cc74e0103527774 grid=[4 1 1] block=[256 1 1] shared=8320 args=[in0 in1 out]
// launch loom_conv_transpose_gemm_25d0fd84275c8571 grid=[4 1 1] block=[256 1 1] shared=8320 args=[in0 in1 out]
// launch loom_conv_transpose_gemm_483710d7fb63dddb grid=[4 1 1] block=[256 1 1] shared=8320 args=[in0 in1 out]

extern "C" __global__ void loom_conv_transpose_gemm_797ce70719c3fc64(const float* __restrict__ in0, const float* __restrict__ in1, float* __restrict__ out)
{
    float* As = (float*)loom_smem;
    float* Bs = As + 1024;
    const int tid = threadIdx.x;
    const int tm = tid % 16;
    const int tn = tid / 16;
    for (int w = blockIdx.x; w < 4; w += gridDim.x) {
        int t = w;
        const int rbeg = 0;
        const int rend = 32;
        const int n0 = (t % 1) * 64;
        t /= 1;
        const int m0 = (t % 4) * 64;
        const int g = t / 4;
        const int axx = tid % 64;
        int ax = m0 + axx;
        if (ax > 255) ax = 255;
        int adx_q = ax;
        const int adx_2 = adx_q % 8;
        adx_q /= 8;
        const int adx_1 = adx_q % 8;
        adx_q /= 8;
        const int aox = adx_q * 2048 + g * 2048;
        const int ac0x = adx_1 * 1;
        const int ac1x = adx_2 * 1;
        const int bkk = tid % 16;
        int bx0 = n0 + tid / 16 + 0;
        if (bx0 > 63) bx0 = 63;
        const int box0 = bx0 * 9 + g * 18432 + 4;
        int bx1 = n0 + tid / 16 + 16;
        if (bx1 > 63) bx1 = 63;
        const int box1 = bx1 * 9 + g * 18432 + 4;
        int bx2 = n0 + tid / 16 + 32;
        if (bx2 > 63) bx2 = 63;
        const int box2 = bx2 * 9 + g * 18432 + 4;
        int bx3 = n0 + tid / 16 + 48;
        if (bx3 > 63) bx3 = 63;
        const int box3 = bx3 * 9 + g * 18432 + 4;
        float acc0_0 = 0.0f;
        float acc0_1 = 0.0f;
        float acc0_2 = 0.0f;
        float acc0_3 = 0.0f;
        float acc1_0 = 0.0f;
        float acc1_1 = 0.0f;
        float acc1_2 = 0.0f;
        float acc1_3 = 0.0f;
        float acc2_0 = 0.0f;
        float acc2_1 = 0.0f;
        float acc2_2 = 0.0f;
        float acc2_3 = 0.0f;
        float acc3_0 = 0.0f;
        float acc3_1 = 0.0f;
        float acc3_2 = 0.0f;
        float acc3_3 = 0.0f;
        float as0;
        float as1;
        float as2;
        float as3;
        float bs0;
        float bs1;
        float bs2;
        float bs3;
        {
            const int ar0 = rbeg + tid / 64 + 0;
            const int aor0 = ar0 * 64;
            const int ac0r0 = 0;
            const int ac1r0 = 0;
            as0 = 0.0f;
            if (ar0 < rend) {
                const int q0 = (ac0x + ac0r0) - 0;
                const int q1 = (ac1x + ac1r0) - 0;
                if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as0 = in0[aox + aor0 + q0 * 8 + q1 * 1];
            }
            const int ar1 = rbeg + tid / 64 + 4;
            const int aor1 = ar1 * 64;
            const int ac0r1 = 0;
            const int ac1r1 = 0;
            as1 = 0.0f;
            if (ar1 < rend) {
                const int q0 = (ac0x + ac0r1) - 0;
                const int q1 = (ac1x + ac1r1) - 0;
                if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as1 = in0[aox + aor1 + q0 * 8 + q1 * 1];
            }
            const int ar2 = rbeg + tid / 64 + 8;
            const int aor2 = ar2 * 64;
            const int ac0r2 = 0;
            const int ac1r2 = 0;
            as2 = 0.0f;
            if (ar2 < rend) {
                const int q0 = (ac0x + ac0r2) - 0;
                const int q1 = (ac1x + ac1r2) - 0;
                if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as2 = in0[aox + aor2 + q0 * 8 + q1 * 1];
            }
            const int ar3 = rbeg + tid / 64 + 12;
            const int aor3 = ar3 * 64;
            const int ac0r3 = 0;
            const int ac1r3 = 0;
            as3 = 0.0f;
            if (ar3 < rend) {
                const int q0 = (ac0x + ac0r3) - 0;
                const int q1 = (ac1x + ac1r3) - 0;
                if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as3 = in0[aox + aor3 + q0 * 8 + q1 * 1];
            }
        }
        {
            const int br = rbeg + bkk;
            const bool bvr = br < rend;
            const int bor = br * 576;
            bs0 = 0.0f;
            if (bvr) {
                bs0 = in1[box0 + bor];
            }
            bs1 = 0.0f;
            if (bvr) {
                bs1 = in1[box1 + bor];
            }
            bs2 = 0.0f;
            if (bvr) {
                bs2 = in1[box2 + bor];
            }
            bs3 = 0.0f;
            if (bvr) {
                bs3 = in1[box3 + bor];
            }
        }
        for (int k0 = rbeg; k0 < rend; k0 += 16) {
            As[(tid / 64 + 0) * 64 + axx] = as0;
            As[(tid / 64 + 4) * 64 + axx] = as1;
            As[(tid / 64 + 8) * 64 + axx] = as2;
            As[(tid / 64 + 12) * 64 + axx] = as3;
            Bs[bkk * 65 + tid / 16 + 0] = bs0;
            Bs[bkk * 65 + tid / 16 + 16] = bs1;
            Bs[bkk * 65 + tid / 16 + 32] = bs2;
            Bs[bkk * 65 + tid / 16 + 48] = bs3;
            __syncthreads();
            if (k0 + 16 < rend) {
                {
                    const int ar0 = k0 + 16 + tid / 64 + 0;
                    const int aor0 = ar0 * 64;
                    const int ac0r0 = 0;
                    const int ac1r0 = 0;
                    as0 = 0.0f;
                    if (ar0 < rend) {
                        const int q0 = (ac0x + ac0r0) - 0;
                        const int q1 = (ac1x + ac1r0) - 0;
                        if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as0 = in0[aox + aor0 + q0 * 8 + q1 * 1];
                    }
                    const int ar1 = k0 + 16 + tid / 64 + 4;
                    const int aor1 = ar1 * 64;
                    const int ac0r1 = 0;
                    const int ac1r1 = 0;
                    as1 = 0.0f;
                    if (ar1 < rend) {
                        const int q0 = (ac0x + ac0r1) - 0;
                        const int q1 = (ac1x + ac1r1) - 0;
                        if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as1 = in0[aox + aor1 + q0 * 8 + q1 * 1];
                    }
                    const int ar2 = k0 + 16 + tid / 64 + 8;
                    const int aor2 = ar2 * 64;
                    const int ac0r2 = 0;
                    const int ac1r2 = 0;
                    as2 = 0.0f;
                    if (ar2 < rend) {
                        const int q0 = (ac0x + ac0r2) - 0;
                        const int q1 = (ac1x + ac1r2) - 0;
                        if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as2 = in0[aox + aor2 + q0 * 8 + q1 * 1];
                    }
                    const int ar3 = k0 + 16 + tid / 64 + 12;
                    const int aor3 = ar3 * 64;
                    const int ac0r3 = 0;
                    const int ac1r3 = 0;
                    as3 = 0.0f;
                    if (ar3 < rend) {
                        const int q0 = (ac0x + ac0r3) - 0;
                        const int q1 = (ac1x + ac1r3) - 0;
                        if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as3 = in0[aox + aor3 + q0 * 8 + q1 * 1];
                    }
                }
                {
                    const int br = k0 + 16 + bkk;
                    const bool bvr = br < rend;
                    const int bor = br * 576;
                    bs0 = 0.0f;
                    if (bvr) {
                        bs0 = in1[box0 + bor];
                    }
                    bs1 = 0.0f;
                    if (bvr) {
                        bs1 = in1[box1 + bor];
                    }
                    bs2 = 0.0f;
                    if (bvr) {
                        bs2 = in1[box2 + bor];
                    }
                    bs3 = 0.0f;
                    if (bvr) {
                        bs3 = in1[box3 + bor];
                    }
                }
            }
            for (int kk = 0; kk < 16; kk++) {
                const float a0 = As[kk * 64 + tm + 0];
                const float a1 = As[kk * 64 + tm + 16];
                const float a2 = As[kk * 64 + tm + 32];
                const float a3 = As[kk * 64 + tm + 48];
                const float b0 = Bs[kk * 65 + tn + 0];
                const float b1 = Bs[kk * 65 + tn + 16];
                const float b2 = Bs[kk * 65 + tn + 32];
                const float b3 = Bs[kk * 65 + tn + 48];
                acc0_0 = fmaf(a0, b0, acc0_0);
                acc0_1 = fmaf(a0, b1, acc0_1);
                acc0_2 = fmaf(a0, b2, acc0_2);
                acc0_3 = fmaf(a0, b3, acc0_3);
                acc1_0 = fmaf(a1, b0, acc1_0);
                acc1_1 = fmaf(a1, b1, acc1_1);
                acc1_2 = fmaf(a1, b2, acc1_2);
                acc1_3 = fmaf(a1, b3, acc1_3);
                acc2_0 = fmaf(a2, b0, acc2_0);
                acc2_1 = fmaf(a2, b1, acc2_1);
                acc2_2 = fmaf(a2, b2, acc2_2);
                acc2_3 = fmaf(a2, b3, acc2_3);
                acc3_0 = fmaf(a3, b0, acc3_0);
                acc3_1 = fmaf(a3, b1, acc3_1);
                acc3_2 = fmaf(a3, b2, acc3_2);
                acc3_3 = fmaf(a3, b3, acc3_3);
            }
            __syncthreads();
        }
        const int ob = g * 16384 + 0;
        const int om0 = m0 + tm + 0;
        int sm0_q = om0;
        const int sm0_2 = sm0_q % 8;
        sm0_q /= 8;
        const int sm0_1 = sm0_q % 8;
        sm0_q /= 8;
        const int oo0 = sm0_q * 16384 + sm0_1 * 32 + sm0_2 * 2;
        const int om1 = m0 + tm + 16;
        int sm1_q = om1;
        const int sm1_2 = sm1_q % 8;
        sm1_q /= 8;
        const int sm1_1 = sm1_q % 8;
        sm1_q /= 8;
        const int oo1 = sm1_q * 16384 + sm1_1 * 32 + sm1_2 * 2;
        const int om2 = m0 + tm + 32;
        int sm2_q = om2;
        const int sm2_2 = sm2_q % 8;
        sm2_q /= 8;
        const int sm2_1 = sm2_q % 8;
        sm2_q /= 8;
        const int oo2 = sm2_q * 16384 + sm2_1 * 32 + sm2_2 * 2;
        const int om3 = m0 + tm + 48;
        int sm3_q = om3;
        const int sm3_2 = sm3_q % 8;
        sm3_q /= 8;
        const int sm3_1 = sm3_q % 8;
        sm3_q /= 8;
        const int oo3 = sm3_q * 16384 + sm3_1 * 32 + sm3_2 * 2;
        const int on0 = n0 + tn + 0;
        int sn0_q = on0;
        const int op0 = sn0_q * 256;
        const int on1 = n0 + tn + 16;
        int sn1_q = on1;
        const int op1 = sn1_q * 256;
        const int on2 = n0 + tn + 32;
        int sn2_q = on2;
        const int op2 = sn2_q * 256;
        const int on3 = n0 + tn + 48;
        int sn3_q = on3;
        const int op3 = sn3_q * 256;
        if (om0 < 256 && on0 < 64) out[ob + oo0 + op0] = acc0_0;
        if (om0 < 256 && on1 < 64) out[ob + oo0 + op1] = acc0_1;
        if (om0 < 256 && on2 < 64) out[ob + oo0 + op2] = acc0_2;
        if (om0 < 256 && on3 < 64) out[ob + oo0 + op3] = acc0_3;
        if (om1 < 256 && on0 < 64) out[ob + oo1 + op0] = acc1_0;
        if (om1 < 256 && on1 < 64) out[ob + oo1 + op1] = acc1_1;
        if (om1 < 256 && on2 < 64) out[ob + oo1 + op2] = acc1_2;
        if (om1 < 256 && on3 < 64) out[ob + oo1 + op3] = acc1_3;
        if (om2 < 256 && on0 < 64) out[ob + oo2 + op0] = acc2_0;
        if (om2 < 256 && on1 < 64) out[ob + oo2 + op1] = acc2_1;
        if (om2 < 256 && on2 < 64) out[ob + oo2 + op2] = acc2_2;
        if (om2 < 256 && on3 < 64) out[ob + oo2 + op3] = acc2_3;
        if (om3 < 256 && on0 < 64) out[ob + oo3 + op0] = acc3_0;
        if (om3 < 256 && on1 < 64) out[ob + oo3 + op1] = acc3_1;
        if (om3 < 256 && on2 < 64) out[ob + oo3 + op2] = acc3_2;
        if (om3 < 256 && on3 < 64) out[ob + oo3 + op3] = acc3_3;
    }
}

extern "C" __global__ void loom_conv_transpose_gemm_1cc74e0103527774(const float* __restrict__ in0, const float* __restrict__ in1, float* __restrict__ out)
{
    float* As = (float*)loom_smem;
    float* Bs = As + 1024;
    const int tid = threadIdx.x;
    const int tm = tid % 16;
    const int tn = tid / 16;
    for (int w = blockIdx.x; w < 4; w += gridDim.x) {
        int t = w;
        const int rbeg = 0;
        const int rend = 64;
        const int n0 = (t % 1) * 64;
        t /= 1;
        const int m0 = (t % 4) * 64;
        const int g = t / 4;
        const int axx = tid % 64;
        int ax = m0 + axx;
        if (ax > 255) ax = 255;
        int adx_q = ax;
        const int adx_2 = adx_q % 8;
        adx_q /= 8;
        const int adx_1 = adx_q % 8;
        adx_q /= 8;
        const int aox = adx_q * 2048 + g * 2048;
        const int ac0x = adx_1 * 1;
        const int ac1x = adx_2 * 1;
        const int bkk = tid % 16;
        int bx0 = n0 + tid / 16 + 0;
        if (bx0 > 63) bx0 = 63;
        const int box0 = bx0 * 9 + g * 18432 + 3;
        int bx1 = n0 + tid / 16 + 16;
        if (bx1 > 63) bx1 = 63;
        const int box1 = bx1 * 9 + g * 18432 + 3;
        int bx2 = n0 + tid / 16 + 32;
        if (bx2 > 63) bx2 = 63;
        const int box2 = bx2 * 9 + g * 18432 + 3;
        int bx3 = n0 + tid / 16 + 48;
        if (bx3 > 63) bx3 = 63;
        const int box3 = bx3 * 9 + g * 18432 + 3;
        float acc0_0 = 0.0f;
        float acc0_1 = 0.0f;
        float acc0_2 = 0.0f;
        float acc0_3 = 0.0f;
        float acc1_0 = 0.0f;
        float acc1_1 = 0.0f;
        float acc1_2 = 0.0f;
        float acc1_3 = 0.0f;
        float acc2_0 = 0.0f;
        float acc2_1 = 0.0f;
        float acc2_2 = 0.0f;
        float acc2_3 = 0.0f;
        float acc3_0 = 0.0f;
        float acc3_1 = 0.0f;
        float acc3_2 = 0.0f;
        float acc3_3 = 0.0f;
        float as0;
        float as1;
        float as2;
        float as3;
        float bs0;
        float bs1;
        float bs2;
        float bs3;
        {
            const int ar0 = rbeg + tid / 64 + 0;
            int adr0_q = ar0;
            const int adr0_2 = adr0_q % 2;
            adr0_q /= 2;
            const int aor0 = adr0_q * 64;
            const int ac0r0 = 0;
            const int ac1r0 = adr0_2 * -1;
            as0 = 0.0f;
            if (ar0 < rend) {
                const int q0 = (ac0x + ac0r0) - 0;
                const int q1 = (ac1x + ac1r0) - -1;
                if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as0 = in0[aox + aor0 + q0 * 8 + q1 * 1];
            }
            const int ar1 = rbeg + tid / 64 + 4;
            int adr1_q = ar1;
            const int adr1_2 = adr1_q % 2;
            adr1_q /= 2;
            const int aor1 = adr1_q * 64;
            const int ac0r1 = 0;
            const int ac1r1 = adr1_2 * -1;
            as1 = 0.0f;
            if (ar1 < rend) {
                const int q0 = (ac0x + ac0r1) - 0;
                const int q1 = (ac1x + ac1r1) - -1;
                if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as1 = in0[aox + aor1 + q0 * 8 + q1 * 1];
            }
            const int ar2 = rbeg + tid / 64 + 8;
            int adr2_q = ar2;
            const int adr2_2 = adr2_q % 2;
            adr2_q /= 2;
            const int aor2 = adr2_q * 64;
            const int ac0r2 = 0;
            const int ac1r2 = adr2_2 * -1;
            as2 = 0.0f;
            if (ar2 < rend) {
                const int q0 = (ac0x + ac0r2) - 0;
                const int q1 = (ac1x + ac1r2) - -1;
                if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as2 = in0[aox + aor2 + q0 * 8 + q1 * 1];
            }
            const int ar3 = rbeg + tid / 64 + 12;
            int adr3_q = ar3;
            const int adr3_2 = adr3_q % 2;
            adr3_q /= 2;
            const int aor3 = adr3_q * 64;
            const int ac0r3 = 0;
            const int ac1r3 = adr3_2 * -1;
            as3 = 0.0f;
            if (ar3 < rend) {
                const int q0 = (ac0x + ac0r3) - 0;
                const int q1 = (ac1x + ac1r3) - -1;
                if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as3 = in0[aox + aor3 + q0 * 8 + q1 * 1];
            }
        }
        {
            const int br = rbeg + bkk;
            const bool bvr = br < rend;
            int bdr_q = br;
            const int bdr_2 = bdr_q % 2;
            bdr_q /= 2;
            const int bor = bdr_q * 576 + bdr_2 * 2;
            bs0 = 0.0f;
            if (bvr) {
                bs0 = in1[box0 + bor];
            }
            bs1 = 0.0f;
            if (bvr) {
                bs1 = in1[box1 + bor];
            }
            bs2 = 0.0f;
            if (bvr) {
                bs2 = in1[box2 + bor];
            }
            bs3 = 0.0f;
            if (bvr) {
                bs3 = in1[box3 + bor];
            }
        }
        for (int k0 = rbeg; k0 < rend; k0 += 16) {
            As[(tid / 64 + 0) * 64 + axx] = as0;
            As[(tid / 64 + 4) * 64 + axx] = as1;
            As[(tid / 64 + 8) * 64 + axx] = as2;
            As[(tid / 64 + 12) * 64 + axx] = as3;
            Bs[bkk * 65 + tid / 16 + 0] = bs0;
            Bs[bkk * 65 + tid / 16 + 16] = bs1;
            Bs[bkk * 65 + tid / 16 + 32] = bs2;
            Bs[bkk * 65 + tid / 16 + 48] = bs3;
            __syncthreads();
            if (k0 + 16 < rend) {
                {
                    const int ar0 = k0 + 16 + tid / 64 + 0;
                    int adr0_q = ar0;
                    const int adr0_2 = adr0_q % 2;
                    adr0_q /= 2;
                    const int aor0 = adr0_q * 64;
                    const int ac0r0 = 0;
                    const int ac1r0 = adr0_2 * -1;
                    as0 = 0.0f;
                    if (ar0 < rend) {
                        const int q0 = (ac0x + ac0r0) - 0;
                        const int q1 = (ac1x + ac1r0) - -1;
                        if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as0 = in0[aox + aor0 + q0 * 8 + q1 * 1];
                    }
                    const int ar1 = k0 + 16 + tid / 64 + 4;
                    int adr1_q = ar1;
                    const int adr1_2 = adr1_q % 2;
                    adr1_q /= 2;
                    const int aor1 = adr1_q * 64;
                    const int ac0r1 = 0;
                    const int ac1r1 = adr1_2 * -1;
                    as1 = 0.0f;
                    if (ar1 < rend) {
                        const int q0 = (ac0x + ac0r1) - 0;
                        const int q1 = (ac1x + ac1r1) - -1;
                        if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as1 = in0[aox + aor1 + q0 * 8 + q1 * 1];
                    }
                    const int ar2 = k0 + 16 + tid / 64 + 8;
                    int adr2_q = ar2;
                    const int adr2_2 = adr2_q % 2;
                    adr2_q /= 2;
                    const int aor2 = adr2_q * 64;
                    const int ac0r2 = 0;
                    const int ac1r2 = adr2_2 * -1;
                    as2 = 0.0f;
                    if (ar2 < rend) {
                        const int q0 = (ac0x + ac0r2) - 0;
                        const int q1 = (ac1x + ac1r2) - -1;
                        if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as2 = in0[aox + aor2 + q0 * 8 + q1 * 1];
                    }
                    const int ar3 = k0 + 16 + tid / 64 + 12;
                    int adr3_q = ar3;
                    const int adr3_2 = adr3_q % 2;
                    adr3_q /= 2;
                    const int aor3 = adr3_q * 64;
                    const int ac0r3 = 0;
                    const int ac1r3 = adr3_2 * -1;
                    as3 = 0.0f;
                    if (ar3 < rend) {
                        const int q0 = (ac0x + ac0r3) - 0;
                        const int q1 = (ac1x + ac1r3) - -1;
                        if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as3 = in0[aox + aor3 + q0 * 8 + q1 * 1];
                    }
                }
                {
                    const int br = k0 + 16 + bkk;
                    const bool bvr = br < rend;
                    int bdr_q = br;
                    const int bdr_2 = bdr_q % 2;
                    bdr_q /= 2;
                    const int bor = bdr_q * 576 + bdr_2 * 2;
                    bs0 = 0.0f;
                    if (bvr) {
                        bs0 = in1[box0 + bor];
                    }
                    bs1 = 0.0f;
                    if (bvr) {
                        bs1 = in1[box1 + bor];
                    }
                    bs2 = 0.0f;
                    if (bvr) {
                        bs2 = in1[box2 + bor];
                    }
                    bs3 = 0.0f;
                    if (bvr) {
                        bs3 = in1[box3 + bor];
                    }
                }
            }
            for (int kk = 0; kk < 16; kk++) {
                const float a0 = As[kk * 64 + tm + 0];
                const float a1 = As[kk * 64 + tm + 16];
                const float a2 = As[kk * 64 + tm + 32];
                const float a3 = As[kk * 64 + tm + 48];
                const float b0 = Bs[kk * 65 + tn + 0];
                const float b1 = Bs[kk * 65 + tn + 16];
                const float b2 = Bs[kk * 65 + tn + 32];
                const float b3 = Bs[kk * 65 + tn + 48];
                acc0_0 = fmaf(a0, b0, acc0_0);
                acc0_1 = fmaf(a0, b1, acc0_1);
                acc0_2 = fmaf(a0, b2, acc0_2);
                acc0_3 = fmaf(a0, b3, acc0_3);
                acc1_0 = fmaf(a1, b0, acc1_0);
                acc1_1 = fmaf(a1, b1, acc1_1);
                acc1_2 = fmaf(a1, b2, acc1_2);
                acc1_3 = fmaf(a1, b3, acc1_3);
                acc2_0 = fmaf(a2, b0, acc2_0);
                acc2_1 = fmaf(a2, b1, acc2_1);
                acc2_2 = fmaf(a2, b2, acc2_2);
                acc2_3 = fmaf(a2, b3, acc2_3);
                acc3_0 = fmaf(a3, b0, acc3_0);
                acc3_1 = fmaf(a3, b1, acc3_1);
                acc3_2 = fmaf(a3, b2, acc3_2);
                acc3_3 = fmaf(a3, b3, acc3_3);
            }
            __syncthreads();
        }
        const int ob = g * 16384 + 1;
        const int om0 = m0 + tm + 0;
        int sm0_q = om0;
        const int sm0_2 = sm0_q % 8;
        sm0_q /= 8;
        const int sm0_1 = sm0_q % 8;
        sm0_q /= 8;
        const int oo0 = sm0_q * 16384 + sm0_1 * 32 + sm0_2 * 2;
        const int om1 = m0 + tm + 16;
        int sm1_q = om1;
        const int sm1_2 = sm1_q % 8;
        sm1_q /= 8;
        const int sm1_1 = sm1_q % 8;
        sm1_q /= 8;
        const int oo1 = sm1_q * 16384 + sm1_1 * 32 + sm1_2 * 2;
        const int om2 = m0 + tm + 32;
        int sm2_q = om2;
        const int sm2_2 = sm2_q % 8;
        sm2_q /= 8;
        const int sm2_1 = sm2_q % 8;
        sm2_q /= 8;
        const int oo2 = sm2_q * 16384 + sm2_1 * 32 + sm2_2 * 2;
        const int om3 = m0 + tm + 48;
        int sm3_q = om3;
        const int sm3_2 = sm3_q % 8;
        sm3_q /= 8;
        const int sm3_1 = sm3_q % 8;
        sm3_q /= 8;
        const int oo3 = sm3_q * 16384 + sm3_1 * 32 + sm3_2 * 2;
        const int on0 = n0 + tn + 0;
        int sn0_q = on0;
        const int op0 = sn0_q * 256;
        const int on1 = n0 + tn + 16;
        int sn1_q = on1;
        const int op1 = sn1_q * 256;
        const int on2 = n0 + tn + 32;
        int sn2_q = on2;
        const int op2 = sn2_q * 256;
        const int on3 = n0 + tn + 48;
        int sn3_q = on3;
        const int op3 = sn3_q * 256;
        if (om0 < 256 && on0 < 64) out[ob + oo0 + op0] = acc0_0;
        if (om0 < 256 && on1 < 64) out[ob + oo0 + op1] = acc0_1;
        if (om0 < 256 && on2 < 64) out[ob + oo0 + op2] = acc0_2;
        if (om0 < 256 && on3 < 64) out[ob + oo0 + op3] = acc0_3;
        if (om1 < 256 && on0 < 64) out[ob + oo1 + op0] = acc1_0;
        if (om1 < 256 && on1 < 64) out[ob + oo1 + op1] = acc1_1;
        if (om1 < 256 && on2 < 64) out[ob + oo1 + op2] = acc1_2;
        if (om1 < 256 && on3 < 64) out[ob + oo1 + op3] = acc1_3;
        if (om2 < 256 && on0 < 64) out[ob + oo2 + op0] = acc2_0;
        if (om2 < 256 && on1 < 64) out[ob + oo2 + op1] = acc2_1;
        if (om2 < 256 && on2 < 64) out[ob + oo2 + op2] = acc2_2;
        if (om2 < 256 && on3 < 64) out[ob + oo2 + op3] = acc2_3;
        if (om3 < 256 && on0 < 64) out[ob + oo3 + op0] = acc3_0;
        if (om3 < 256 && on1 < 64) out[ob + oo3 + op1] = acc3_1;
        if (om3 < 256 && on2 < 64) out[ob + oo3 + op2] = acc3_2;
        if (om3 < 256 && on3 < 64) out[ob + oo3 + op3] = acc3_3;
    }
}

extern "C" __global__ void loom_conv_transpose_gemm_25d0fd84275c8571(const float* __restrict__ in0, const float* __restrict__ in1, float* __restrict__ out)
{
    float* As = (float*)loom_smem;
    float* Bs = As + 1024;
    const int tid = threadIdx.x;
    const int tm = tid % 16;
    const int tn = tid / 16;
    for (int w = blockIdx.x; w < 4; w += gridDim.x) {
        int t = w;
        const int rbeg = 0;
        const int rend = 64;
        const int n0 = (t % 1) * 64;
        t /= 1;
        const int m0 = (t % 4) * 64;
        const int g = t / 4;
        const int axx = tid % 64;
        int ax = m0 + axx;
        if (ax > 255) ax = 255;
        int adx_q = ax;
        const int adx_2 = adx_q % 8;
        adx_q /= 8;
        const int adx_1 = adx_q % 8;
        adx_q /= 8;
        const int aox = adx_q * 2048 + g * 2048;
        const int ac0x = adx_1 * 1;
        const int ac1x = adx_2 * 1;
        const int bkk = tid % 16;
        int bx0 = n0 + tid / 16 + 0;
        if (bx0 > 63) bx0 = 63;
        const int box0 = bx0 * 9 + g * 18432 + 1;
        int bx1 = n0 + tid / 16 + 16;
        if (bx1 > 63) bx1 = 63;
        const int box1 = bx1 * 9 + g * 18432 + 1;
        int bx2 = n0 + tid / 16 + 32;
        if (bx2 > 63) bx2 = 63;
        const int box2 = bx2 * 9 + g * 18432 + 1;
        int bx3 = n0 + tid / 16 + 48;
        if (bx3 > 63) bx3 = 63;
        const int box3 = bx3 * 9 + g * 18432 + 1;
        float acc0_0 = 0.0f;
        float acc0_1 = 0.0f;
        float acc0_2 = 0.0f;
        float acc0_3 = 0.0f;
        float acc1_0 = 0.0f;
        float acc1_1 = 0.0f;
        float acc1_2 = 0.0f;
        float acc1_3 = 0.0f;
        float acc2_0 = 0.0f;
        float acc2_1 = 0.0f;
        float acc2_2 = 0.0f;
        float acc2_3 = 0.0f;
        float acc3_0 = 0.0f;
        float acc3_1 = 0.0f;
        float acc3_2 = 0.0f;
        float acc3_3 = 0.0f;
        float as0;
        float as1;
        float as2;
        float as3;
        float bs0;
        float bs1;
        float bs2;
        float bs3;
        {
            const int ar0 = rbeg + tid / 64 + 0;
            int adr0_q = ar0;
            const int adr0_1 = adr0_q % 2;
            adr0_q /= 2;
            const int aor0 = adr0_q * 64;
            const int ac0r0 = adr0_1 * -1;
            const int ac1r0 = 0;
            as0 = 0.0f;
            if (ar0 < rend) {
                const int q0 = (ac0x + ac0r0) - -1;
                const int q1 = (ac1x + ac1r0) - 0;
                if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as0 = in0[aox + aor0 + q0 * 8 + q1 * 1];
            }
            const int ar1 = rbeg + tid / 64 + 4;
            int adr1_q = ar1;
            const int adr1_1 = adr1_q % 2;
            adr1_q /= 2;
            const int aor1 = adr1_q * 64;
            const int ac0r1 = adr1_1 * -1;
            const int ac1r1 = 0;
            as1 = 0.0f;
            if (ar1 < rend) {
                const int q0 = (ac0x + ac0r1) - -1;
                const int q1 = (ac1x + ac1r1) - 0;
                if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as1 = in0[aox + aor1 + q0 * 8 + q1 * 1];
            }
            const int ar2 = rbeg + tid / 64 + 8;
            int adr2_q = ar2;
            const int adr2_1 = adr2_q % 2;
            adr2_q /= 2;
            const int aor2 = adr2_q * 64;
            const int ac0r2 = adr2_1 * -1;
            const int ac1r2 = 0;
            as2 = 0.0f;
            if (ar2 < rend) {
                const int q0 = (ac0x + ac0r2) - -1;
                const int q1 = (ac1x + ac1r2) - 0;
                if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as2 = in0[aox + aor2 + q0 * 8 + q1 * 1];
            }
            const int ar3 = rbeg + tid / 64 + 12;
            int adr3_q = ar3;
            const int adr3_1 = adr3_q % 2;
            adr3_q /= 2;
            const int aor3 = adr3_q * 64;
            const int ac0r3 = adr3_1 * -1;
            const int ac1r3 = 0;
            as3 = 0.0f;
            if (ar3 < rend) {
                const int q0 = (ac0x + ac0r3) - -1;
                const int q1 = (ac1x + ac1r3) - 0;
                if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as3 = in0[aox + aor3 + q0 * 8 + q1 * 1];
            }
        }
        {
            const int br = rbeg + bkk;
            const bool bvr = br < rend;
            int bdr_q = br;
            const int bdr_1 = bdr_q % 2;
            bdr_q /= 2;
            const int bor = bdr_q * 576 + bdr_1 * 6;
            bs0 = 0.0f;
            if (bvr) {
                bs0 = in1[box0 + bor];
            }
            bs1 = 0.0f;
            if (bvr) {
                bs1 = in1[box1 + bor];
            }
            bs2 = 0.0f;
            if (bvr) {
                bs2 = in1[box2 + bor];
            }
            bs3 = 0.0f;
            if (bvr) {
                bs3 = in1[box3 + bor];
            }
        }
        for (int k0 = rbeg; k0 < rend; k0 += 16) {
            As[(tid / 64 + 0) * 64 + axx] = as0;
            As[(tid / 64 + 4) * 64 + axx] = as1;
            As[(tid / 64 + 8) * 64 + axx] = as2;
            As[(tid / 64 + 12) * 64 + axx] = as3;
            Bs[bkk * 65 + tid / 16 + 0] = bs0;
            Bs[bkk * 65 + tid / 16 + 16] = bs1;
            Bs[bkk * 65 + tid / 16 + 32] = bs2;
            Bs[bkk * 65 + tid / 16 + 48] = bs3;
            __syncthreads();
            if (k0 + 16 < rend) {
                {
                    const int ar0 = k0 + 16 + tid / 64 + 0;
                    int adr0_q = ar0;
                    const int adr0_1 = adr0_q % 2;
                    adr0_q /= 2;
                    const int aor0 = adr0_q * 64;
                    const int ac0r0 = adr0_1 * -1;
                    const int ac1r0 = 0;
                    as0 = 0.0f;
                    if (ar0 < rend) {
                        const int q0 = (ac0x + ac0r0) - -1;
                        const int q1 = (ac1x + ac1r0) - 0;
                        if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as0 = in0[aox + aor0 + q0 * 8 + q1 * 1];
                    }
                    const int ar1 = k0 + 16 + tid / 64 + 4;
                    int adr1_q = ar1;
                    const int adr1_1 = adr1_q % 2;
                    adr1_q /= 2;
                    const int aor1 = adr1_q * 64;
                    const int ac0r1 = adr1_1 * -1;
                    const int ac1r1 = 0;
                    as1 = 0.0f;
                    if (ar1 < rend) {
                        const int q0 = (ac0x + ac0r1) - -1;
                        const int q1 = (ac1x + ac1r1) - 0;
                        if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as1 = in0[aox + aor1 + q0 * 8 + q1 * 1];
                    }
                    const int ar2 = k0 + 16 + tid / 64 + 8;
                    int adr2_q = ar2;
                    const int adr2_1 = adr2_q % 2;
                    adr2_q /= 2;
                    const int aor2 = adr2_q * 64;
                    const int ac0r2 = adr2_1 * -1;
                    const int ac1r2 = 0;
                    as2 = 0.0f;
                    if (ar2 < rend) {
                        const int q0 = (ac0x + ac0r2) - -1;
                        const int q1 = (ac1x + ac1r2) - 0;
                        if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as2 = in0[aox + aor2 + q0 * 8 + q1 * 1];
                    }
                    const int ar3 = k0 + 16 + tid / 64 + 12;
                    int adr3_q = ar3;
                    const int adr3_1 = adr3_q % 2;
                    adr3_q /= 2;
                    const int aor3 = adr3_q * 64;
                    const int ac0r3 = adr3_1 * -1;
                    const int ac1r3 = 0;
                    as3 = 0.0f;
                    if (ar3 < rend) {
                        const int q0 = (ac0x + ac0r3) - -1;
                        const int q1 = (ac1x + ac1r3) - 0;
                        if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as3 = in0[aox + aor3 + q0 * 8 + q1 * 1];
                    }
                }
                {
                    const int br = k0 + 16 + bkk;
                    const bool bvr = br < rend;
                    int bdr_q = br;
                    const int bdr_1 = bdr_q % 2;
                    bdr_q /= 2;
                    const int bor = bdr_q * 576 + bdr_1 * 6;
                    bs0 = 0.0f;
                    if (bvr) {
                        bs0 = in1[box0 + bor];
                    }
                    bs1 = 0.0f;
                    if (bvr) {
                        bs1 = in1[box1 + bor];
                    }
                    bs2 = 0.0f;
                    if (bvr) {
                        bs2 = in1[box2 + bor];
                    }
                    bs3 = 0.0f;
                    if (bvr) {
                        bs3 = in1[box3 + bor];
                    }
                }
            }
            for (int kk = 0; kk < 16; kk++) {
                const float a0 = As[kk * 64 + tm + 0];
                const float a1 = As[kk * 64 + tm + 16];
                const float a2 = As[kk * 64 + tm + 32];
                const float a3 = As[kk * 64 + tm + 48];
                const float b0 = Bs[kk * 65 + tn + 0];
                const float b1 = Bs[kk * 65 + tn + 16];
                const float b2 = Bs[kk * 65 + tn + 32];
                const float b3 = Bs[kk * 65 + tn + 48];
                acc0_0 = fmaf(a0, b0, acc0_0);
                acc0_1 = fmaf(a0, b1, acc0_1);
                acc0_2 = fmaf(a0, b2, acc0_2);
                acc0_3 = fmaf(a0, b3, acc0_3);
                acc1_0 = fmaf(a1, b0, acc1_0);
                acc1_1 = fmaf(a1, b1, acc1_1);
                acc1_2 = fmaf(a1, b2, acc1_2);
                acc1_3 = fmaf(a1, b3, acc1_3);
                acc2_0 = fmaf(a2, b0, acc2_0);
                acc2_1 = fmaf(a2, b1, acc2_1);
                acc2_2 = fmaf(a2, b2, acc2_2);
                acc2_3 = fmaf(a2, b3, acc2_3);
                acc3_0 = fmaf(a3, b0, acc3_0);
                acc3_1 = fmaf(a3, b1, acc3_1);
                acc3_2 = fmaf(a3, b2, acc3_2);
                acc3_3 = fmaf(a3, b3, acc3_3);
            }
            __syncthreads();
        }
        const int ob = g * 16384 + 16;
        const int om0 = m0 + tm + 0;
        int sm0_q = om0;
        const int sm0_2 = sm0_q % 8;
        sm0_q /= 8;
        const int sm0_1 = sm0_q % 8;
        sm0_q /= 8;
        const int oo0 = sm0_q * 16384 + sm0_1 * 32 + sm0_2 * 2;
        const int om1 = m0 + tm + 16;
        int sm1_q = om1;
        const int sm1_2 = sm1_q % 8;
        sm1_q /= 8;
        const int sm1_1 = sm1_q % 8;
        sm1_q /= 8;
        const int oo1 = sm1_q * 16384 + sm1_1 * 32 + sm1_2 * 2;
        const int om2 = m0 + tm + 32;
        int sm2_q = om2;
        const int sm2_2 = sm2_q % 8;
        sm2_q /= 8;
        const int sm2_1 = sm2_q % 8;
        sm2_q /= 8;
        const int oo2 = sm2_q * 16384 + sm2_1 * 32 + sm2_2 * 2;
        const int om3 = m0 + tm + 48;
        int sm3_q = om3;
        const int sm3_2 = sm3_q % 8;
        sm3_q /= 8;
        const int sm3_1 = sm3_q % 8;
        sm3_q /= 8;
        const int oo3 = sm3_q * 16384 + sm3_1 * 32 + sm3_2 * 2;
        const int on0 = n0 + tn + 0;
        int sn0_q = on0;
        const int op0 = sn0_q * 256;
        const int on1 = n0 + tn + 16;
        int sn1_q = on1;
        const int op1 = sn1_q * 256;
        const int on2 = n0 + tn + 32;
        int sn2_q = on2;
        const int op2 = sn2_q * 256;
        const int on3 = n0 + tn + 48;
        int sn3_q = on3;
        const int op3 = sn3_q * 256;
        if (om0 < 256 && on0 < 64) out[ob + oo0 + op0] = acc0_0;
        if (om0 < 256 && on1 < 64) out[ob + oo0 + op1] = acc0_1;
        if (om0 < 256 && on2 < 64) out[ob + oo0 + op2] = acc0_2;
        if (om0 < 256 && on3 < 64) out[ob + oo0 + op3] = acc0_3;
        if (om1 < 256 && on0 < 64) out[ob + oo1 + op0] = acc1_0;
        if (om1 < 256 && on1 < 64) out[ob + oo1 + op1] = acc1_1;
        if (om1 < 256 && on2 < 64) out[ob + oo1 + op2] = acc1_2;
        if (om1 < 256 && on3 < 64) out[ob + oo1 + op3] = acc1_3;
        if (om2 < 256 && on0 < 64) out[ob + oo2 + op0] = acc2_0;
        if (om2 < 256 && on1 < 64) out[ob + oo2 + op1] = acc2_1;
        if (om2 < 256 && on2 < 64) out[ob + oo2 + op2] = acc2_2;
        if (om2 < 256 && on3 < 64) out[ob + oo2 + op3] = acc2_3;
        if (om3 < 256 && on0 < 64) out[ob + oo3 + op0] = acc3_0;
        if (om3 < 256 && on1 < 64) out[ob + oo3 + op1] = acc3_1;
        if (om3 < 256 && on2 < 64) out[ob + oo3 + op2] = acc3_2;
        if (om3 < 256 && on3 < 64) out[ob + oo3 + op3] = acc3_3;
    }
}

extern "C" __global__ void loom_conv_transpose_gemm_483710d7fb63dddb(const float* __restrict__ in0, const float* __restrict__ in1, float* __restrict__ out)
{
    float* As = (float*)loom_smem;
    float* Bs = As + 1024;
    const int tid = threadIdx.x;
    const int tm = tid % 16;
    const int tn = tid / 16;
    for (int w = blockIdx.x; w < 4; w += gridDim.x) {
        int t = w;
        const int rbeg = 0;
        const int rend = 128;
        const int n0 = (t % 1) * 64;
        t /= 1;
        const int m0 = (t % 4) * 64;
        const int g = t / 4;
        const int axx = tid % 64;
        int ax = m0 + axx;
        if (ax > 255) ax = 255;
        int adx_q = ax;
        const int adx_2 = adx_q % 8;
        adx_q /= 8;
        const int adx_1 = adx_q % 8;
        adx_q /= 8;
        const int aox = adx_q * 2048 + g * 2048;
        const int ac0x = adx_1 * 1;
        const int ac1x = adx_2 * 1;
        const int bkk = tid % 16;
        int bx0 = n0 + tid / 16 + 0;
        if (bx0 > 63) bx0 = 63;
        const int box0 = bx0 * 9 + g * 18432;
        int bx1 = n0 + tid / 16 + 16;
        if (bx1 > 63) bx1 = 63;
        const int box1 = bx1 * 9 + g * 18432;
        int bx2 = n0 + tid / 16 + 32;
        if (bx2 > 63) bx2 = 63;
        const int box2 = bx2 * 9 + g * 18432;
        int bx3 = n0 + tid / 16 + 48;
        if (bx3 > 63) bx3 = 63;
        const int box3 = bx3 * 9 + g * 18432;
        float acc0_0 = 0.0f;
        float acc0_1 = 0.0f;
        float acc0_2 = 0.0f;
        float acc0_3 = 0.0f;
        float acc1_0 = 0.0f;
        float acc1_1 = 0.0f;
        float acc1_2 = 0.0f;
        float acc1_3 = 0.0f;
        float acc2_0 = 0.0f;
        float acc2_1 = 0.0f;
        float acc2_2 = 0.0f;
        float acc2_3 = 0.0f;
        float acc3_0 = 0.0f;
        float acc3_1 = 0.0f;
        float acc3_2 = 0.0f;
        float acc3_3 = 0.0f;
        float as0;
        float as1;
        float as2;
        float as3;
        float bs0;
        float bs1;
        float bs2;
        float bs3;
        {
            const int ar0 = rbeg + tid / 64 + 0;
            int adr0_q = ar0;
            const int adr0_2 = adr0_q % 2;
            adr0_q /= 2;
            const int adr0_1 = adr0_q % 2;
            adr0_q /= 2;
            const int aor0 = adr0_q * 64;
            const int ac0r0 = adr0_1 * -1;
            const int ac1r0 = adr0_2 * -1;
            as0 = 0.0f;
            if (ar0 < rend) {
                const int q0 = (ac0x + ac0r0) - -1;
                const int q1 = (ac1x + ac1r0) - -1;
                if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as0 = in0[aox + aor0 + q0 * 8 + q1 * 1];
            }
            const int ar1 = rbeg + tid / 64 + 4;
            int adr1_q = ar1;
            const int adr1_2 = adr1_q % 2;
            adr1_q /= 2;
            const int adr1_1 = adr1_q % 2;
            adr1_q /= 2;
            const int aor1 = adr1_q * 64;
            const int ac0r1 = adr1_1 * -1;
            const int ac1r1 = adr1_2 * -1;
            as1 = 0.0f;
            if (ar1 < rend) {
                const int q0 = (ac0x + ac0r1) - -1;
                const int q1 = (ac1x + ac1r1) - -1;
                if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as1 = in0[aox + aor1 + q0 * 8 + q1 * 1];
            }
            const int ar2 = rbeg + tid / 64 + 8;
            int adr2_q = ar2;
            const int adr2_2 = adr2_q % 2;
            adr2_q /= 2;
            const int adr2_1 = adr2_q % 2;
            adr2_q /= 2;
            const int aor2 = adr2_q * 64;
            const int ac0r2 = adr2_1 * -1;
            const int ac1r2 = adr2_2 * -1;
            as2 = 0.0f;
            if (ar2 < rend) {
                const int q0 = (ac0x + ac0r2) - -1;
                const int q1 = (ac1x + ac1r2) - -1;
                if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as2 = in0[aox + aor2 + q0 * 8 + q1 * 1];
            }
            const int ar3 = rbeg + tid / 64 + 12;
            int adr3_q = ar3;
            const int adr3_2 = adr3_q % 2;
            adr3_q /= 2;
            const int adr3_1 = adr3_q % 2;
            adr3_q /= 2;
            const int aor3 = adr3_q * 64;
            const int ac0r3 = adr3_1 * -1;
            const int ac1r3 = adr3_2 * -1;
            as3 = 0.0f;
            if (ar3 < rend) {
                const int q0 = (ac0x + ac0r3) - -1;
                const int q1 = (ac1x + ac1r3) - -1;
                if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as3 = in0[aox + aor3 + q0 * 8 + q1 * 1];
            }
        }
        {
            const int br = rbeg + bkk;
            const bool bvr = br < rend;
            int bdr_q = br;
            const int bdr_2 = bdr_q % 2;
            bdr_q /= 2;
            const int bdr_1 = bdr_q % 2;
            bdr_q /= 2;
            const int bor = bdr_q * 576 + bdr_1 * 6 + bdr_2 * 2;
            bs0 = 0.0f;
            if (bvr) {
                bs0 = in1[box0 + bor];
            }
            bs1 = 0.0f;
            if (bvr) {
                bs1 = in1[box1 + bor];
            }
            bs2 = 0.0f;
            if (bvr) {
                bs2 = in1[box2 + bor];
            }
            bs3 = 0.0f;
            if (bvr) {
                bs3 = in1[box3 + bor];
            }
        }
        for (int k0 = rbeg; k0 < rend; k0 += 16) {
            As[(tid / 64 + 0) * 64 + axx] = as0;
            As[(tid / 64 + 4) * 64 + axx] = as1;
            As[(tid / 64 + 8) * 64 + axx] = as2;
            As[(tid / 64 + 12) * 64 + axx] = as3;
            Bs[bkk * 65 + tid / 16 + 0] = bs0;
            Bs[bkk * 65 + tid / 16 + 16] = bs1;
            Bs[bkk * 65 + tid / 16 + 32] = bs2;
            Bs[bkk * 65 + tid / 16 + 48] = bs3;
            __syncthreads();
            if (k0 + 16 < rend) {
                {
                    const int ar0 = k0 + 16 + tid / 64 + 0;
                    int adr0_q = ar0;
                    const int adr0_2 = adr0_q % 2;
                    adr0_q /= 2;
                    const int adr0_1 = adr0_q % 2;
                    adr0_q /= 2;
                    const int aor0 = adr0_q * 64;
                    const int ac0r0 = adr0_1 * -1;
                    const int ac1r0 = adr0_2 * -1;
                    as0 = 0.0f;
                    if (ar0 < rend) {
                        const int q0 = (ac0x + ac0r0) - -1;
                        const int q1 = (ac1x + ac1r0) - -1;
                        if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as0 = in0[aox + aor0 + q0 * 8 + q1 * 1];
                    }
                    const int ar1 = k0 + 16 + tid / 64 + 4;
                    int adr1_q = ar1;
                    const int adr1_2 = adr1_q % 2;
                    adr1_q /= 2;
                    const int adr1_1 = adr1_q % 2;
                    adr1_q /= 2;
                    const int aor1 = adr1_q * 64;
                    const int ac0r1 = adr1_1 * -1;
                    const int ac1r1 = adr1_2 * -1;
                    as1 = 0.0f;
                    if (ar1 < rend) {
                        const int q0 = (ac0x + ac0r1) - -1;
                        const int q1 = (ac1x + ac1r1) - -1;
                        if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as1 = in0[aox + aor1 + q0 * 8 + q1 * 1];
                    }
                    const int ar2 = k0 + 16 + tid / 64 + 8;
                    int adr2_q = ar2;
                    const int adr2_2 = adr2_q % 2;
                    adr2_q /= 2;
                    const int adr2_1 = adr2_q % 2;
                    adr2_q /= 2;
                    const int aor2 = adr2_q * 64;
                    const int ac0r2 = adr2_1 * -1;
                    const int ac1r2 = adr2_2 * -1;
                    as2 = 0.0f;
                    if (ar2 < rend) {
                        const int q0 = (ac0x + ac0r2) - -1;
                        const int q1 = (ac1x + ac1r2) - -1;
                        if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as2 = in0[aox + aor2 + q0 * 8 + q1 * 1];
                    }
                    const int ar3 = k0 + 16 + tid / 64 + 12;
                    int adr3_q = ar3;
                    const int adr3_2 = adr3_q % 2;
                    adr3_q /= 2;
                    const int adr3_1 = adr3_q % 2;
                    adr3_q /= 2;
                    const int aor3 = adr3_q * 64;
                    const int ac0r3 = adr3_1 * -1;
                    const int ac1r3 = adr3_2 * -1;
                    as3 = 0.0f;
                    if (ar3 < rend) {
                        const int q0 = (ac0x + ac0r3) - -1;
                        const int q1 = (ac1x + ac1r3) - -1;
                        if ((unsigned int)q0 < 8u && (unsigned int)q1 < 8u) as3 = in0[aox + aor3 + q0 * 8 + q1 * 1];
                    }
                }
                {
                    const int br = k0 + 16 + bkk;
                    const bool bvr = br < rend;
                    int bdr_q = br;
                    const int bdr_2 = bdr_q % 2;
                    bdr_q /= 2;
                    const int bdr_1 = bdr_q % 2;
                    bdr_q /= 2;
                    const int bor = bdr_q * 576 + bdr_1 * 6 + bdr_2 * 2;
                    bs0 = 0.0f;
                    if (bvr) {
                        bs0 = in1[box0 + bor];
                    }
                    bs1 = 0.0f;
                    if (bvr) {
                        bs1 = in1[box1 + bor];
                    }
                    bs2 = 0.0f;
                    if (bvr) {
                        bs2 = in1[box2 + bor];
                    }
                    bs3 = 0.0f;
                    if (bvr) {
                        bs3 = in1[box3 + bor];
                    }
                }
            }
            for (int kk = 0; kk < 16; kk++) {
                const float a0 = As[kk * 64 + tm + 0];
                const float a1 = As[kk * 64 + tm + 16];
                const float a2 = As[kk * 64 + tm + 32];
                const float a3 = As[kk * 64 + tm + 48];
                const float b0 = Bs[kk * 65 + tn + 0];
                const float b1 = Bs[kk * 65 + tn + 16];
                const float b2 = Bs[kk * 65 + tn + 32];
                const float b3 = Bs[kk * 65 + tn + 48];
                acc0_0 = fmaf(a0, b0, acc0_0);
                acc0_1 = fmaf(a0, b1, acc0_1);
                acc0_2 = fmaf(a0, b2, acc0_2);
                acc0_3 = fmaf(a0, b3, acc0_3);
                acc1_0 = fmaf(a1, b0, acc1_0);
                acc1_1 = fmaf(a1, b1, acc1_1);
                acc1_2 = fmaf(a1, b2, acc1_2);
                acc1_3 = fmaf(a1, b3, acc1_3);
                acc2_0 = fmaf(a2, b0, acc2_0);
                acc2_1 = fmaf(a2, b1, acc2_1);
                acc2_2 = fmaf(a2, b2, acc2_2);
                acc2_3 = fmaf(a2, b3, acc2_3);
                acc3_0 = fmaf(a3, b0, acc3_0);
                acc3_1 = fmaf(a3, b1, acc3_1);
                acc3_2 = fmaf(a3, b2, acc3_2);
                acc3_3 = fmaf(a3, b3, acc3_3);
            }
            __syncthreads();
        }
        const int ob = g * 16384 + 17;
        const int om0 = m0 + tm + 0;
        int sm0_q = om0;
        const int sm0_2 = sm0_q % 8;
        sm0_q /= 8;
        const int sm0_1 = sm0_q % 8;
        sm0_q /= 8;
        const int oo0 = sm0_q * 16384 + sm0_1 * 32 + sm0_2 * 2;
        const int om1 = m0 + tm + 16;
        int sm1_q = om1;
        const int sm1_2 = sm1_q % 8;
        sm1_q /= 8;
        const int sm1_1 = sm1_q % 8;
        sm1_q /= 8;
        const int oo1 = sm1_q * 16384 + sm1_1 * 32 + sm1_2 * 2;
        const int om2 = m0 + tm + 32;
        int sm2_q = om2;
        const int sm2_2 = sm2_q % 8;
        sm2_q /= 8;
        const int sm2_1 = sm2_q % 8;
        sm2_q /= 8;
        const int oo2 = sm2_q * 16384 + sm2_1 * 32 + sm2_2 * 2;
        const int om3 = m0 + tm + 48;
        int sm3_q = om3;
        const int sm3_2 = sm3_q % 8;
        sm3_q /= 8;
        const int sm3_1 = sm3_q % 8;
        sm3_q /= 8;
        const int oo3 = sm3_q * 16384 + sm3_1 * 32 + sm3_2 * 2;
        const int on0 = n0 + tn + 0;
        int sn0_q = on0;
        const int op0 = sn0_q * 256;
        const int on1 = n0 + tn + 16;
        int sn1_q = on1;
        const int op1 = sn1_q * 256;
        const int on2 = n0 + tn + 32;
        int sn2_q = on2;
        const int op2 = sn2_q * 256;
        const int on3 = n0 + tn + 48;
        int sn3_q = on3;
        const int op3 = sn3_q * 256;
        if (om0 < 256 && on0 < 64) out[ob + oo0 + op0] = acc0_0;
        if (om0 < 256 && on1 < 64) out[ob + oo0 + op1] = acc0_1;
        if (om0 < 256 && on2 < 64) out[ob + oo0 + op2] = acc0_2;
        if (om0 < 256 && on3 < 64) out[ob + oo0 + op3] = acc0_3;
        if (om1 < 256 && on0 < 64) out[ob + oo1 + op0] = acc1_0;
        if (om1 < 256 && on1 < 64) out[ob + oo1 + op1] = acc1_1;
        if (om1 < 256 && on2 < 64) out[ob + oo1 + op2] = acc1_2;
        if (om1 < 256 && on3 < 64) out[ob + oo1 + op3] = acc1_3;
        if (om2 < 256 && on0 < 64) out[ob + oo2 + op0] = acc2_0;
        if (om2 < 256 && on1 < 64) out[ob + oo2 + op1] = acc2_1;
        if (om2 < 256 && on2 < 64) out[ob + oo2 + op2] = acc2_2;
        if (om2 < 256 && on3 < 64) out[ob + oo2 + op3] = acc2_3;
        if (om3 < 256 && on0 < 64) out[ob + oo3 + op0] = acc3_0;
        if (om3 < 256 && on1 < 64) out[ob + oo3 + op1] = acc3_1;
        if (om3 < 256 && on2 < 64) out[ob + oo3 + op2] = acc3_2;
        if (om3 < 256 && on3 < 64) out[ob + oo3 + op3] = acc3_3;
    }
}
