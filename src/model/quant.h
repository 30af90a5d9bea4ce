/*
 * quant.h -- ggml tensor types: sizes and dequantisation to float.
 *
 * Layer: model files, beside gguf.h. Pure functions, no state.
 * Block layouts follow ggml-common.h / ggml-quants.c exactly (the formats
 * are data formats, described in words in docs/ and checked by tests
 * against an independent NumPy decoder).
 */
#ifndef CAIRN_QUANT_H
#define CAIRN_QUANT_H

#include <stddef.h>
#include <stdint.h>

/* Name ("f32", "q4_K", ...) or "unknown". */
const char *quant_type_name(uint32_t type);
/* 1 if quant_dequant() handles the type. */
int quant_supported(uint32_t type);
/* Elements per block (1 for f32/f16/bf16, 32, or 256 for K-quants); 0 if unsupported. */
uint64_t quant_block_elems(uint32_t type);
/* Bytes of one block; 0 if unsupported. */
uint64_t quant_block_bytes(uint32_t type);
/*
 * Bytes of n elements of type; 0 if unsupported or n is not a multiple of
 * the block size, or on overflow.
 */
uint64_t quant_row_bytes(uint32_t type, uint64_t n);
/*
 * Dequantise n elements (a multiple of the block size) from src (any
 * alignment, quant_row_bytes(type, n) bytes) into dst. CAIRN_OK, or
 * CAIRN_INVALID for an unsupported type or a bad n (nothing written).
 */
int quant_dequant(uint32_t type, const void *src, float *dst, uint64_t n);

/*
 * IEEE half and bfloat16 conversions. To half: round to nearest, ties to
 * even, subnormals kept, overflow (>= 65520) to infinity, NaN stays NaN
 * (quiet, sign and top payload bits kept). To bfloat16: ggml's rule, the
 * same rounding, NaN made quiet.
 */
float quant_f16_to_f32(uint16_t h);
uint16_t quant_f32_to_f16(float f);
float quant_bf16_to_f32(uint16_t h);
uint16_t quant_f32_to_bf16(float f);

#endif /* CAIRN_QUANT_H */
