// launch loom_conv_gemm_6326753854d65183 grid=[8 1 1] block=[256 1 1] shared=10368 args=[in0 in1 out]

extern "C" __global__ void loom_conv_gemm_6326753854d65183(const float* __restrict__ in0, const float* __restrict__ in1, float* __restrict__ out)
{
    float* As = (float*)loom_smem;
    float* Bs = As + 2048;
    const int tid = threadIdx.x;
    const int tm = tid % 32;
    const int tn = tid / 32;
    for (int w = blockIdx.x; w < 8; w += gridDim.x) {
        int t = w;
        const int rbeg = 0;
        const int rend = 144;
        const int n0 = (t % 1) * 32;
        t /= 1;
        const int m0 = (t % 8) * 128;
        const int g = t / 8;
        const int axx = tid % 128;
        int ax = m0 + axx;
        if (ax > 1023) ax = 1023;
        int adx_q = ax;
        const int adx_2 = adx_q % 16;
        adx_q /= 16;
        const int adx_1 = adx_q % 16;
        adx_q /= 16;
        const int aox = adx_q * 4096 + g * 4096;
        const int ac0x = adx_1 * 1;
        const int ac1x = adx_2 * 1;
        const int bkk = tid % 16;
        int bx0 = n0 + tid / 16 + 0;
        if (bx0 > 31) bx0 = 31;
        const int box0 = bx0 * 144 + g * 4608;
        int bx1 = n0 + tid / 16 + 16;
        if (bx1 > 31) bx1 = 31;
        const int box1 = bx1 * 144 + g * 4608;
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
        float as4;
        float as5;
        float as6;
        float as7;
        float bs0;
        float bs1;
        {
            const int ar0 = rbeg + tid / 128 + 0;
            int adr0_q = ar0;
            const int adr0_2 = adr0_q % 3;
            adr0_q /= 3;
            const int adr0_1 = adr0_q % 3;
            adr0_q /= 3;
            const int aor0 = adr0_q * 256;
            const int ac0r0 = adr0_1 * 1;
            const int ac1r0 = adr0_2 * 1;
            as0 = 0.0f;
            if (ar0 < rend) {
                const int q0 = (ac0x + ac0r0) - 1;
                const int q1 = (ac1x + ac1r0) - 1;
                if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) as0 = in0[aox + aor0 + q0 * 16 + q1 * 1];
            }
            const int ar1 = rbeg + tid / 128 + 2;
            int adr1_q = ar1;
            const int adr1_2 = adr1_q % 3;
            adr1_q /= 3;
            const int adr1_1 = adr1_q % 3;
            adr1_q /= 3;
            const int aor1 = adr1_q * 256;
            const int ac0r1 = adr1_1 * 1;
            const int ac1r1 = adr1_2 * 1;
            as1 = 0.0f;
            if (ar1 < rend) {
                const int q0 = (ac0x + ac0r1) - 1;
                const int q1 = (ac1x + ac1r1) - 1;
                if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) as1 = in0[aox + aor1 + q0 * 16 + q1 * 1];
            }
            const int ar2 = rbeg + tid / 128 + 4;
            int adr2_q = ar2;
            const int adr2_2 = adr2_q % 3;
            adr2_q /= 3;
            const int adr2_1 = adr2_q % 3;
            adr2_q /= 3;
            const int aor2 = adr2_q * 256;
            const int ac0r2 = adr2_1 * 1;
            const int ac1r2 = adr2_2 * 1;
            as2 = 0.0f;
            if (ar2 < rend) {
                const int q0 = (ac0x + ac0r2) - 1;
                const int q1 = (ac1x + ac1r2) - 1;
                if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) as2 = in0[aox + aor2 + q0 * 16 + q1 * 1];
            }
            const int ar3 = rbeg + tid / 128 + 6;
            int adr3_q = ar3;
            const int adr3_2 = adr3_q % 3;
            adr3_q /= 3;
            const int adr3_1 = adr3_q % 3;
            adr3_q /= 3;
            const int aor3 = adr3_q * 256;
            const int ac0r3 = adr3_1 * 1;
            const int ac1r3 = adr3_2 * 1;
            as3 = 0.0f;
            if (ar3 < rend) {
                const int q0 = (ac0x + ac0r3) - 1;
                const int q1 = (ac1x + ac1r3) - 1;
                if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) as3 = in0[aox + aor3 + q0 * 16 + q1 * 1];
            }
            const int ar4 = rbeg + tid / 128 + 8;
            int adr4_q = ar4;
            const int adr4_2 = adr4_q % 3;
            adr4_q /= 3;
            const int adr4_1 = adr4_q % 3;
            adr4_q /= 3;
            const int aor4 = adr4_q * 256;
            const int ac0r4 = adr4_1 * 1;
            const int ac1r4 = adr4_2 * 1;
            as4 = 0.0f;
            if (ar4 < rend) {
                const int q0 = (ac0x + ac0r4) - 1;
                const int q1 = (ac1x + ac1r4) - 1;
                if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) as4 = in0[aox + aor4 + q0 * 16 + q1 * 1];
            }
            const int ar5 = rbeg + tid / 128 + 10;
            int adr5_q = ar5;
            const int adr5_2 = adr5_q % 3;
            adr5_q /= 3;
            const int adr5_1 = adr5_q % 3;
            adr5_q /= 3;
            const int aor5 = adr5_q * 256;
            const int ac0r5 = adr5_1 * 1;
            const int ac1r5 = adr5_2 * 1;
            as5 = 0.0f;
            if (ar5 < rend) {
                const int q0 = (ac0x + ac0r5) - 1;
                const int q1 = (ac1x + ac1r5) - 1;
                if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) as5 = in0[aox + aor5 + q0 * 16 + q1 * 1];
            }
            const int ar6 = rbeg + tid / 128 + 12;
            int adr6_q = ar6;
            const int adr6_2 = adr6_q % 3;
            adr6_q /= 3;
            const int adr6_1 = adr6_q % 3;
            adr6_q /= 3;
            const int aor6 = adr6_q * 256;
            const int ac0r6 = adr6_1 * 1;
            const int ac1r6 = adr6_2 * 1;
            as6 = 0.0f;
            if (ar6 < rend) {
                const int q0 = (ac0x + ac0r6) - 1;
                const int q1 = (ac1x + ac1r6) - 1;
                if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) as6 = in0[aox + aor6 + q0 * 16 + q1 * 1];
            }
            const int ar7 = rbeg + tid / 128 + 14;
            int adr7_q = ar7;
            const int adr7_2 = adr7_q % 3;
            adr7_q /= 3;
            const int adr7_1 = adr7_q % 3;
            adr7_q /= 3;
            const int aor7 = adr7_q * 256;
            const int ac0r7 = adr7_1 * 1;
            const int ac1r7 = adr7_2 * 1;
            as7 = 0.0f;
            if (ar7 < rend) {
                const int q0 = (ac0x + ac0r7) - 1;
                const int q1 = (ac1x + ac1r7) - 1;
                if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) as7 = in0[aox + aor7 + q0 * 16 + q1 * 1];
            }
        }
        {
            const int br = rbeg + bkk;
            const bool bvr = br < rend;
            const int bor = br * 1;
            bs0 = 0.0f;
            if (bvr) {
                bs0 = in1[box0 + bor];
            }
            bs1 = 0.0f;
            if (bvr) {
                bs1 = in1[box1 + bor];
            }
        }
        for (int k0 = rbeg; k0 < rend; k0 += 16) {
            As[(tid / 128 + 0) * 128 + axx] = as0;
            As[(tid / 128 + 2) * 128 + axx] = as1;
            As[(tid / 128 + 4) * 128 + axx] = as2;
            As[(tid / 128 + 6) * 128 + axx] = as3;
            As[(tid / 128 + 8) * 128 + axx] = as4;
            As[(tid / 128 + 10) * 128 + axx] = as5;
            As[(tid / 128 + 12) * 128 + axx] = as6;
            As[(tid / 128 + 14) * 128 + axx] = as7;
            Bs[bkk * 33 + tid / 16 + 0] = bs0;
            Bs[bkk * 33 + tid / 16 + 16] = bs1;
            __syncthreads();
            if (k0 + 16 < rend) {
                {
                    const int ar0 = k0 + 16 + tid / 128 + 0;
                    int adr0_q = ar0;
                    const int adr0_2 = adr0_q % 3;
                    adr0_q /= 3;
                    const int adr0_1 = adr0_q % 3;
                    adr0_q /= 3;
                    const int aor0 = adr0_q * 256;
                    const int ac0r0 = adr0_1 * 1;
                    const int ac1r0 = adr0_2 * 1;
                    as0 = 0.0f;
                    if (ar0 < rend) {
                        const int q0 = (ac0x + ac0r0) - 1;
                        const int q1 = (ac1x + ac1r0) - 1;
                        if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) as0 = in0[aox + aor0 + q0 * 16 + q1 * 1];
                    }
                    const int ar1 = k0 + 16 + tid / 128 + 2;
                    int adr1_q = ar1;
                    const int adr1_2 = adr1_q % 3;
                    adr1_q /= 3;
                    const int adr1_1 = adr1_q % 3;
                    adr1_q /= 3;
                    const int aor1 = adr1_q * 256;
                    const int ac0r1 = adr1_1 * 1;
                    const int ac1r1 = adr1_2 * 1;
                    as1 = 0.0f;
                    if (ar1 < rend) {
                        const int q0 = (ac0x + ac0r1) - 1;
                        const int q1 = (ac1x + ac1r1) - 1;
                        if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) as1 = in0[aox + aor1 + q0 * 16 + q1 * 1];
                    }
                    const int ar2 = k0 + 16 + tid / 128 + 4;
                    int adr2_q = ar2;
                    const int adr2_2 = adr2_q % 3;
                    adr2_q /= 3;
                    const int adr2_1 = adr2_q % 3;
                    adr2_q /= 3;
                    const int aor2 = adr2_q * 256;
                    const int ac0r2 = adr2_1 * 1;
                    const int ac1r2 = adr2_2 * 1;
                    as2 = 0.0f;
                    if (ar2 < rend) {
                        const int q0 = (ac0x + ac0r2) - 1;
                        const int q1 = (ac1x + ac1r2) - 1;
                        if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) as2 = in0[aox + aor2 + q0 * 16 + q1 * 1];
                    }
                    const int ar3 = k0 + 16 + tid / 128 + 6;
                    int adr3_q = ar3;
                    const int adr3_2 = adr3_q % 3;
                    adr3_q /= 3;
                    const int adr3_1 = adr3_q % 3;
                    adr3_q /= 3;
                    const int aor3 = adr3_q * 256;
                    const int ac0r3 = adr3_1 * 1;
                    const int ac1r3 = adr3_2 * 1;
                    as3 = 0.0f;
                    if (ar3 < rend) {
                        const int q0 = (ac0x + ac0r3) - 1;
                        const int q1 = (ac1x + ac1r3) - 1;
                        if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) as3 = in0[aox + aor3 + q0 * 16 + q1 * 1];
                    }
                    const int ar4 = k0 + 16 + tid / 128 + 8;
                    int adr4_q = ar4;
                    const int adr4_2 = adr4_q % 3;
                    adr4_q /= 3;
                    const int adr4_1 = adr4_q % 3;
                    adr4_q /= 3;
                    const int aor4 = adr4_q * 256;
                    const int ac0r4 = adr4_1 * 1;
                    const int ac1r4 = adr4_2 * 1;
                    as4 = 0.0f;
                    if (ar4 < rend) {
                        const int q0 = (ac0x + ac0r4) - 1;
                        const int q1 = (ac1x + ac1r4) - 1;
                        if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) as4 = in0[aox + aor4 + q0 * 16 + q1 * 1];
                    }
                    const int ar5 = k0 + 16 + tid / 128 + 10;
                    int adr5_q = ar5;
                    const int adr5_2 = adr5_q % 3;
                    adr5_q /= 3;
                    const int adr5_1 = adr5_q % 3;
                    adr5_q /= 3;
                    const int aor5 = adr5_q * 256;
                    const int ac0r5 = adr5_1 * 1;
                    const int ac1r5 = adr5_2 * 1;
                    as5 = 0.0f;
                    if (ar5 < rend) {
                        const int q0 = (ac0x + ac0r5) - 1;
                        const int q1 = (ac1x + ac1r5) - 1;
                        if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) as5 = in0[aox + aor5 + q0 * 16 + q1 * 1];
                    }
                    const int ar6 = k0 + 16 + tid / 128 + 12;
                    int adr6_q = ar6;
                    const int adr6_2 = adr6_q % 3;
                    adr6_q /= 3;
                    const int adr6_1 = adr6_q % 3;
                    adr6_q /= 3;
                    const int aor6 = adr6_q * 256;
                    const int ac0r6 = adr6_1 * 1;
                    const int ac1r6 = adr6_2 * 1;
                    as6 = 0.0f;
                    if (ar6 < rend) {
                        const int q0 = (ac0x + ac0r6) - 1;
                        const int q1 = (ac1x + ac1r6) - 1;
                        if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) as6 = in0[aox + aor6 + q0 * 16 + q1 * 1];
                    }
                    const int ar7 = k0 + 16 + tid / 128 + 14;
                    int adr7_q = ar7;
                    const int adr7_2 = adr7_q % 3;
                    adr7_q /= 3;
                    const int adr7_1 = adr7_q % 3;
                    adr7_q /= 3;
                    const int aor7 = adr7_q * 256;
                    const int ac0r7 = adr7_1 * 1;
                    const int ac1r7 = adr7_2 * 1;
                    as7 = 0.0f;
                    if (ar7 < rend) {
                        const int q0 = (ac0x + ac0r7) - 1;
                        const int q1 = (ac1x + ac1r7) - 1;
                        if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) as7 = in0[aox + aor7 + q0 * 16 + q1 * 1];
                    }
                }
                {
                    const int br = k0 + 16 + bkk;
                    const bool bvr = br < rend;
                    const int bor = br * 1;
                    bs0 = 0.0f;
                    if (bvr) {
                        bs0 = in1[box0 + bor];
                    }
                    bs1 = 0.0f;
                    if (bvr) {
                        bs1 = in1[box1 + bor];
                    }
                }
            }
            for (int kk = 0; kk < 16; kk++) {
                const float a0 = As[kk * 128 + tm + 0];
                const float a1 = As[kk * 128 + tm + 32];
                const float a2 = As[kk * 128 + tm + 64];
                const float a3 = As[kk * 128 + tm + 96];
                const float b0 = Bs[kk * 33 + tn + 0];
                const float b1 = Bs[kk * 33 + tn + 8];
                const float b2 = Bs[kk * 33 + tn + 16];
                const float b3 = Bs[kk * 33 + tn + 24];
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
        const int ob = g * 8192 + 0;
        const int om0 = m0 + tm + 0;
        int sm0_q = om0;
        const int sm0_2 = sm0_q % 16;
        sm0_q /= 16;
        const int sm0_1 = sm0_q % 16;
        sm0_q /= 16;
        const int oo0 = sm0_q * 8192 + sm0_1 * 16 + sm0_2;
        const int om1 = m0 + tm + 32;
        int sm1_q = om1;
        const int sm1_2 = sm1_q % 16;
        sm1_q /= 16;
        const int sm1_1 = sm1_q % 16;
        sm1_q /= 16;
        const int oo1 = sm1_q * 8192 + sm1_1 * 16 + sm1_2;
        const int om2 = m0 + tm + 64;
        int sm2_q = om2;
        const int sm2_2 = sm2_q % 16;
        sm2_q /= 16;
        const int sm2_1 = sm2_q % 16;
        sm2_q /= 16;
        const int oo2 = sm2_q * 8192 + sm2_1 * 16 + sm2_2;
        const int om3 = m0 + tm + 96;
        int sm3_q = om3;
        const int sm3_2 = sm3_q % 16;
        sm3_q /= 16;
        const int sm3_1 = sm3_q % 16;
        sm3_q /= 16;
        const int oo3 = sm3_q * 8192 + sm3_1 * 16 + sm3_2;
        const int on0 = n0 + tn + 0;
        int sn0_q = on0;
        const int op0 = sn0_q * 256;
        const int on1 = n0 + tn + 8;
        int sn1_q = on1;
        const int op1 = sn1_q * 256;
        const int on2 = n0 + tn + 16;
        int sn2_q = on2;
        const int op2 = sn2_q * 256;
        const int on3 = n0 + tn + 24;
        int sn3_q = on3;
        const int op3 = sn3_q * 256;
        if (om0 < 1024 && on0 < 32) out[ob + oo0 + op0] = acc0_0;
        if (om0 < 1024 && on1 < 32) out[ob + oo0 + op1] = acc0_1;
        if (om0 < 1024 && on2 < 32) out[ob + oo0 + op2] = acc0_2;
        if (om0 < 1024 && on3 < 32) out[ob + oo0 + op3] = acc0_3;
        if (om1 < 1024 && on0 < 32) out[ob + oo1 + op0] = acc1_0;
        if (om1 < 1024 && on1 < 32) out[ob + oo1 + op1] = acc1_1;
        if (om1 < 1024 && on2 < 32) out[ob + oo1 + op2] = acc1_2;
        if (om1 < 1024 && on3 < 32) out[ob + oo1 + op3] = acc1_3;
        if (om2 < 1024 && on0 < 32) out[ob + oo2 + op0] = acc2_0;
        if (om2 < 1024 && on1 < 32) out[ob + oo2 + op1] = acc2_1;
        if (om2 < 1024 && on2 < 32) out[ob + oo2 + op2] = acc2_2;
        if (om2 < 1024 && on3 < 32) out[ob + oo2 + op3] = acc2_3;
        if (om3 < 1024 && on0 < 32) out[ob + oo3 + op0] = acc3_0;
        if (om3 < 1024 && on1 < 32) out[ob + oo3 + op1] = acc3_1;
        if (om3 < 1024 && on2 < 32) out[ob + oo3 + op2] = acc3_2;
        if (om3 < 1024 && on3 < 32) out[ob + oo3 + op3] = acc3_3;
    }
}
