// launch loom_concat_12d0baf1054d3ac0 grid=[1 1 1] block=[256 1 1] shared=0 args=[in0 in1 in2 out]

extern "C" __global__ void loom_concat_12d0baf1054d3ac0(const unsigned int* __restrict__ in0, const unsigned int* __restrict__ in1, const unsigned int* __restrict__ in2, unsigned int* __restrict__ out)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < 12LL; i += (long long)gridDim.x * blockDim.x) {
        const long long o = i / 6LL;
        const long long j = i - o * 6LL;
        if (j < 1LL) {
            out[i] = in0[o * 1LL + (j - 0LL)];
        } else if (j < 4LL) {
            out[i] = in1[o * 3LL + (j - 1LL)];
        } else {
            out[i] = in2[o * 2LL + (j - 4LL)];
        }
    }
}
