// launch loom_ew_f09ae8109a213eec grid=[1 1 1] block=[256 1 1] shared=0 args=[in0 out]

extern "C" __global__ void loom_ew_f09ae8109a213eec(const float* __restrict__ in0, int* __restrict__ out)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < 100LL; i += (long long)gridDim.x * blockDim.x) {
        const float a0 = in0[i];
        const int t0 = loom_d2i32((double)a0);
        out[i] = t0;
    }
}
