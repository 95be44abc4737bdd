// launch loom_transpose_679caf07b699c9e6 grid=[4 1 1] block=[32 8 1] shared=4224 args=[in0 out]

extern "C" __global__ void loom_transpose_679caf07b699c9e6(const unsigned int* __restrict__ in0, unsigned int* __restrict__ out)
{
    unsigned int* tile = (unsigned int*)loom_smem;
    const long long tx = threadIdx.x;
    const long long ty = threadIdx.y;
    for (long long w = blockIdx.x; w < 4LL; w += gridDim.x) {
        const long long jb = (w % 2LL) * 32;
        const long long ja = ((w / 2LL) % 2LL) * 32;
        const long long ib = 0LL;
        const long long ob = 0LL;
        for (long long y = ty; y < 32; y += 8) {
            if (ja + tx < 48LL && jb + y < 64LL) tile[y * 33 + tx] = in0[ib + (ja + tx) + (jb + y) * 48LL];
        }
        __syncthreads();
        for (long long y = ty; y < 32; y += 8) {
            if (ja + y < 48LL && jb + tx < 64LL) out[ob + (ja + y) * 64LL + (jb + tx)] = tile[tx * 33 + y];
        }
        __syncthreads();
    }
}
