// launch loom_conv_filter_grad_gemm_part_dbcf6aded323cb2e grid=[16 1 1] block=[256 1 1] shared=10368 args=[in0 in1 scratch]
// launch loom_conv_filter_grad_gemm_sum_19995484df9fb199 grid=[18 1 1] block=[256 1 1] shared=0 args=[scratch out]
// scratch 147456 bytes

extern "C" __global__ void loom_conv_filter_grad_gemm_part_dbcf6aded323cb2e(const float* __restrict__ in0, const float* __restrict__ in1, float* __restrict__ scratch)
{
    float* As = (float*)loom_smem;
    float* Bs = As + 528;
    const int tid = threadIdx.x;
    const int tm = tid % 8;
    const int tn = tid / 8;
    for (int w = blockIdx.x; w < 16; w += gridDim.x) {
        int t = w;
        const int part = t % 8;
        t /= 8;
        const int rbeg = part * 128;
        const int rend = rbeg + 128 < 1024 ? rbeg + 128 : 1024;
        const int n0 = (t % 2) * 128;
        t /= 2;
        const int m0 = (t % 1) * 32;
        const int g = t / 1;
        const int akk = tid % 16;
        int ax0 = m0 + tid / 16 + 0;
        if (ax0 > 31) ax0 = 31;
        const int aox0 = ax0 * 256 + g * 8192;
        int ax1 = m0 + tid / 16 + 16;
        if (ax1 > 31) ax1 = 31;
        const int aox1 = ax1 * 256 + g * 8192;
        const int bkk = tid % 16;
        int bx0 = n0 + tid / 16 + 0;
        if (bx0 > 143) bx0 = 143;
        int bdx0_q = bx0;
        const int bdx0_2 = bdx0_q % 3;
        bdx0_q /= 3;
        const int bdx0_1 = bdx0_q % 3;
        bdx0_q /= 3;
        const int box0 = bdx0_q * 256 + g * 4096;
        const int bc0x0 = bdx0_1 * 1;
        const int bc1x0 = bdx0_2 * 1;
        int bx1 = n0 + tid / 16 + 16;
        if (bx1 > 143) bx1 = 143;
        int bdx1_q = bx1;
        const int bdx1_2 = bdx1_q % 3;
        bdx1_q /= 3;
        const int bdx1_1 = bdx1_q % 3;
        bdx1_q /= 3;
        const int box1 = bdx1_q * 256 + g * 4096;
        const int bc0x1 = bdx1_1 * 1;
        const int bc1x1 = bdx1_2 * 1;
        int bx2 = n0 + tid / 16 + 32;
        if (bx2 > 143) bx2 = 143;
        int bdx2_q = bx2;
        const int bdx2_2 = bdx2_q % 3;
        bdx2_q /= 3;
        const int bdx2_1 = bdx2_q % 3;
        bdx2_q /= 3;
        const int box2 = bdx2_q * 256 + g * 4096;
        const int bc0x2 = bdx2_1 * 1;
        const int bc1x2 = bdx2_2 * 1;
        int bx3 = n0 + tid / 16 + 48;
        if (bx3 > 143) bx3 = 143;
        int bdx3_q = bx3;
        const int bdx3_2 = bdx3_q % 3;
        bdx3_q /= 3;
        const int bdx3_1 = bdx3_q % 3;
        bdx3_q /= 3;
        const int box3 = bdx3_q * 256 + g * 4096;
        const int bc0x3 = bdx3_1 * 1;
        const int bc1x3 = bdx3_2 * 1;
        int bx4 = n0 + tid / 16 + 64;
        if (bx4 > 143) bx4 = 143;
        int bdx4_q = bx4;
        const int bdx4_2 = bdx4_q % 3;
        bdx4_q /= 3;
        const int bdx4_1 = bdx4_q % 3;
        bdx4_q /= 3;
        const int box4 = bdx4_q * 256 + g * 4096;
        const int bc0x4 = bdx4_1 * 1;
        const int bc1x4 = bdx4_2 * 1;
        int bx5 = n0 + tid / 16 + 80;
        if (bx5 > 143) bx5 = 143;
        int bdx5_q = bx5;
        const int bdx5_2 = bdx5_q % 3;
        bdx5_q /= 3;
        const int bdx5_1 = bdx5_q % 3;
        bdx5_q /= 3;
        const int box5 = bdx5_q * 256 + g * 4096;
        const int bc0x5 = bdx5_1 * 1;
        const int bc1x5 = bdx5_2 * 1;
        int bx6 = n0 + tid / 16 + 96;
        if (bx6 > 143) bx6 = 143;
        int bdx6_q = bx6;
        const int bdx6_2 = bdx6_q % 3;
        bdx6_q /= 3;
        const int bdx6_1 = bdx6_q % 3;
        bdx6_q /= 3;
        const int box6 = bdx6_q * 256 + g * 4096;
        const int bc0x6 = bdx6_1 * 1;
        const int bc1x6 = bdx6_2 * 1;
        int bx7 = n0 + tid / 16 + 112;
        if (bx7 > 143) bx7 = 143;
        int bdx7_q = bx7;
        const int bdx7_2 = bdx7_q % 3;
        bdx7_q /= 3;
        const int bdx7_1 = bdx7_q % 3;
        bdx7_q /= 3;
        const int box7 = bdx7_q * 256 + g * 4096;
        const int bc0x7 = bdx7_1 * 1;
        const int bc1x7 = bdx7_2 * 1;
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
        float bs0;
        float bs1;
        float bs2;
        float bs3;
        float bs4;
        float bs5;
        float bs6;
        float bs7;
        {
            const int ar = rbeg + akk;
            const bool avr = ar < rend;
            int adr_q = ar;
            const int adr_2 = adr_q % 16;
            adr_q /= 16;
            const int adr_1 = adr_q % 16;
            adr_q /= 16;
            const int aor = adr_q * 8192 + adr_1 * 16 + adr_2 * 1;
            as0 = 0.0f;
            if (avr) {
                as0 = in1[aox0 + aor];
            }
            as1 = 0.0f;
            if (avr) {
                as1 = in1[aox1 + aor];
            }
        }
        {
            const int br = rbeg + bkk;
            const bool bvr = br < rend;
            int bdr_q = br;
            const int bdr_2 = bdr_q % 16;
            bdr_q /= 16;
            const int bdr_1 = bdr_q % 16;
            bdr_q /= 16;
            const int bor = bdr_q * 4096;
            const int bc0r = bdr_1 * 1;
            const int bc1r = bdr_2 * 1;
            bs0 = 0.0f;
            if (bvr) {
                const int q0 = (bc0x0 + bc0r) - 1;
                const int q1 = (bc1x0 + bc1r) - 1;
                if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) bs0 = in0[box0 + bor + q0 * 16 + q1 * 1];
            }
            bs1 = 0.0f;
            if (bvr) {
                const int q0 = (bc0x1 + bc0r) - 1;
                const int q1 = (bc1x1 + bc1r) - 1;
                if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) bs1 = in0[box1 + bor + q0 * 16 + q1 * 1];
            }
            bs2 = 0.0f;
            if (bvr) {
                const int q0 = (bc0x2 + bc0r) - 1;
                const int q1 = (bc1x2 + bc1r) - 1;
                if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) bs2 = in0[box2 + bor + q0 * 16 + q1 * 1];
            }
            bs3 = 0.0f;
            if (bvr) {
                const int q0 = (bc0x3 + bc0r) - 1;
                const int q1 = (bc1x3 + bc1r) - 1;
                if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) bs3 = in0[box3 + bor + q0 * 16 + q1 * 1];
            }
            bs4 = 0.0f;
            if (bvr) {
                const int q0 = (bc0x4 + bc0r) - 1;
                const int q1 = (bc1x4 + bc1r) - 1;
                if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) bs4 = in0[box4 + bor + q0 * 16 + q1 * 1];
            }
            bs5 = 0.0f;
            if (bvr) {
                const int q0 = (bc0x5 + bc0r) - 1;
                const int q1 = (bc1x5 + bc1r) - 1;
                if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) bs5 = in0[box5 + bor + q0 * 16 + q1 * 1];
            }
            bs6 = 0.0f;
            if (bvr) {
                const int q0 = (bc0x6 + bc0r) - 1;
                const int q1 = (bc1x6 + bc1r) - 1;
                if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) bs6 = in0[box6 + bor + q0 * 16 + q1 * 1];
            }
            bs7 = 0.0f;
            if (bvr) {
                const int q0 = (bc0x7 + bc0r) - 1;
                const int q1 = (bc1x7 + bc1r) - 1;
                if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) bs7 = in0[box7 + bor + q0 * 16 + q1 * 1];
            }
        }
        for (int k0 = rbeg; k0 < rend; k0 += 16) {
            As[akk * 33 + tid / 16 + 0] = as0;
            As[akk * 33 + tid / 16 + 16] = as1;
            Bs[bkk * 129 + tid / 16 + 0] = bs0;
            Bs[bkk * 129 + tid / 16 + 16] = bs1;
            Bs[bkk * 129 + tid / 16 + 32] = bs2;
            Bs[bkk * 129 + tid / 16 + 48] = bs3;
            Bs[bkk * 129 + tid / 16 + 64] = bs4;
            Bs[bkk * 129 + tid / 16 + 80] = bs5;
            Bs[bkk * 129 + tid / 16 + 96] = bs6;
            Bs[bkk * 129 + tid / 16 + 112] = bs7;
            __syncthreads();
            if (k0 + 16 < rend) {
                {
                    const int ar = k0 + 16 + akk;
                    const bool avr = ar < rend;
                    int adr_q = ar;
                    const int adr_2 = adr_q % 16;
                    adr_q /= 16;
                    const int adr_1 = adr_q % 16;
                    adr_q /= 16;
                    const int aor = adr_q * 8192 + adr_1 * 16 + adr_2 * 1;
                    as0 = 0.0f;
                    if (avr) {
                        as0 = in1[aox0 + aor];
                    }
                    as1 = 0.0f;
                    if (avr) {
                        as1 = in1[aox1 + aor];
                    }
                }
                {
                    const int br = k0 + 16 + bkk;
                    const bool bvr = br < rend;
                    int bdr_q = br;
                    const int bdr_2 = bdr_q % 16;
                    bdr_q /= 16;
                    const int bdr_1 = bdr_q % 16;
                    bdr_q /= 16;
                    const int bor = bdr_q * 4096;
                    const int bc0r = bdr_1 * 1;
                    const int bc1r = bdr_2 * 1;
                    bs0 = 0.0f;
                    if (bvr) {
                        const int q0 = (bc0x0 + bc0r) - 1;
                        const int q1 = (bc1x0 + bc1r) - 1;
                        if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) bs0 = in0[box0 + bor + q0 * 16 + q1 * 1];
                    }
                    bs1 = 0.0f;
                    if (bvr) {
                        const int q0 = (bc0x1 + bc0r) - 1;
                        const int q1 = (bc1x1 + bc1r) - 1;
                        if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) bs1 = in0[box1 + bor + q0 * 16 + q1 * 1];
                    }
                    bs2 = 0.0f;
                    if (bvr) {
                        const int q0 = (bc0x2 + bc0r) - 1;
                        const int q1 = (bc1x2 + bc1r) - 1;
                        if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) bs2 = in0[box2 + bor + q0 * 16 + q1 * 1];
                    }
                    bs3 = 0.0f;
                    if (bvr) {
                        const int q0 = (bc0x3 + bc0r) - 1;
                        const int q1 = (bc1x3 + bc1r) - 1;
                        if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) bs3 = in0[box3 + bor + q0 * 16 + q1 * 1];
                    }
                    bs4 = 0.0f;
                    if (bvr) {
                        const int q0 = (bc0x4 + bc0r) - 1;
                        const int q1 = (bc1x4 + bc1r) - 1;
                        if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) bs4 = in0[box4 + bor + q0 * 16 + q1 * 1];
                    }
                    bs5 = 0.0f;
                    if (bvr) {
                        const int q0 = (bc0x5 + bc0r) - 1;
                        const int q1 = (bc1x5 + bc1r) - 1;
                        if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) bs5 = in0[box5 + bor + q0 * 16 + q1 * 1];
                    }
                    bs6 = 0.0f;
                    if (bvr) {
                        const int q0 = (bc0x6 + bc0r) - 1;
                        const int q1 = (bc1x6 + bc1r) - 1;
                        if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) bs6 = in0[box6 + bor + q0 * 16 + q1 * 1];
                    }
                    bs7 = 0.0f;
                    if (bvr) {
                        const int q0 = (bc0x7 + bc0r) - 1;
                        const int q1 = (bc1x7 + bc1r) - 1;
                        if ((unsigned int)q0 < 16u && (unsigned int)q1 < 16u) bs7 = in0[box7 + bor + q0 * 16 + q1 * 1];
                    }
                }
            }
            for (int kk = 0; kk < 16; kk++) {
                const float a0 = As[kk * 33 + tm + 0];
                const float a1 = As[kk * 33 + tm + 8];
                const float a2 = As[kk * 33 + tm + 16];
                const float a3 = As[kk * 33 + tm + 24];
                const float b0 = Bs[kk * 129 + tn + 0];
                const float b1 = Bs[kk * 129 + tn + 32];
                const float b2 = Bs[kk * 129 + tn + 64];
                const float b3 = Bs[kk * 129 + tn + 96];
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
        const int ob = g * 4608 + 0;
        const int om0 = m0 + tm + 0;
        int sm0_q = om0;
        const int oo0 = sm0_q * 144;
        const int om1 = m0 + tm + 8;
        int sm1_q = om1;
        const int oo1 = sm1_q * 144;
        const int om2 = m0 + tm + 16;
        int sm2_q = om2;
        const int oo2 = sm2_q * 144;
        const int om3 = m0 + tm + 24;
        int sm3_q = om3;
        const int oo3 = sm3_q * 144;
        const int on0 = n0 + tn + 0;
        int sn0_q = on0;
        const int sn0_2 = sn0_q % 3;
        sn0_q /= 3;
        const int sn0_1 = sn0_q % 3;
        sn0_q /= 3;
        const int op0 = sn0_q * 9 + sn0_1 * 3 + sn0_2;
        const int on1 = n0 + tn + 32;
        int sn1_q = on1;
        const int sn1_2 = sn1_q % 3;
        sn1_q /= 3;
        const int sn1_1 = sn1_q % 3;
        sn1_q /= 3;
        const int op1 = sn1_q * 9 + sn1_1 * 3 + sn1_2;
        const int on2 = n0 + tn + 64;
        int sn2_q = on2;
        const int sn2_2 = sn2_q % 3;
        sn2_q /= 3;
        const int sn2_1 = sn2_q % 3;
        sn2_q /= 3;
        const int op2 = sn2_q * 9 + sn2_1 * 3 + sn2_2;
        const int on3 = n0 + tn + 96;
        int sn3_q = on3;
        const int sn3_2 = sn3_q % 3;
        sn3_q /= 3;
        const int sn3_1 = sn3_q % 3;
        sn3_q /= 3;
        const int op3 = sn3_q * 9 + sn3_1 * 3 + sn3_2;
        if (om0 < 32 && on0 < 144) scratch[part * 4608 + ob + oo0 + op0] = acc0_0;
        if (om0 < 32 && on1 < 144) scratch[part * 4608 + ob + oo0 + op1] = acc0_1;
        if (om0 < 32 && on2 < 144) scratch[part * 4608 + ob + oo0 + op2] = acc0_2;
        if (om0 < 32 && on3 < 144) scratch[part * 4608 + ob + oo0 + op3] = acc0_3;
        if (om1 < 32 && on0 < 144) scratch[part * 4608 + ob + oo1 + op0] = acc1_0;
        if (om1 < 32 && on1 < 144) scratch[part * 4608 + ob + oo1 + op1] = acc1_1;
        if (om1 < 32 && on2 < 144) scratch[part * 4608 + ob + oo1 + op2] = acc1_2;
        if (om1 < 32 && on3 < 144) scratch[part * 4608 + ob + oo1 + op3] = acc1_3;
        if (om2 < 32 && on0 < 144) scratch[part * 4608 + ob + oo2 + op0] = acc2_0;
        if (om2 < 32 && on1 < 144) scratch[part * 4608 + ob + oo2 + op1] = acc2_1;
        if (om2 < 32 && on2 < 144) scratch[part * 4608 + ob + oo2 + op2] = acc2_2;
        if (om2 < 32 && on3 < 144) scratch[part * 4608 + ob + oo2 + op3] = acc2_3;
        if (om3 < 32 && on0 < 144) scratch[part * 4608 + ob + oo3 + op0] = acc3_0;
        if (om3 < 32 && on1 < 144) scratch[part * 4608 + ob + oo3 + op1] = acc3_1;
        if (om3 < 32 && on2 < 144) scratch[part * 4608 + ob + oo3 + op2] = acc3_2;
        if (om3 < 32 && on3 < 144) scratch[part * 4608 + ob + oo3 + op3] = acc3_3;
    }
}

extern "C" __global__ void loom_conv_filter_grad_gemm_sum_19995484df9fb199(const float* __restrict__ scratch, float* __restrict__ out)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < 4608LL; i += (long long)gridDim.x * blockDim.x) {
        double s = 0.0;
        for (long long q = 0; q < 8LL; q++) s += (double)scratch[q * 4608LL + i];
        out[i] = (float)s;
    }
}
