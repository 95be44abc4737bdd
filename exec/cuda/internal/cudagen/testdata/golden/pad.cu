// launch loom_pad_1b69f8eeab7e99bc grid=[1 1 1] block=[256 1 1] shared=0 args=[in0 out]

extern "C" __global__ void loom_pad_1b69f8eeab7e99bc(const unsigned int* __restrict__ in0, unsigned int* __restrict__ out)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < 88LL; i += (long long)gridDim.x * blockDim.x) {
        long long q = i;
        long long src = 0;
        bool ok = true;
        const long long p1 = q % 11LL;
        q /= 11LL;
        ok = ok && (p1 - 0LL) >= 0 && (p1 - 0LL) % 3LL == 0 && (p1 - 0LL) / 3LL < 4LL;
        src += ((p1 - 0LL) / 3LL) * 1LL;
        const long long p0 = q;
        ok = ok && (p0 - 1LL) >= 0 && (p0 - 1LL) % 2LL == 0 && (p0 - 1LL) / 2LL < 3LL;
        src += ((p0 - 1LL) / 2LL) * 4LL;
        out[i] = ok ? in0[src] : 0u;
    }
}
