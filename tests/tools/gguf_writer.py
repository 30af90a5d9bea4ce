#!/usr/bin/python3
"""gguf_writer.py -- a small GGUF v3 writer and an independent NumPy decoder
of ggml's tensor types, for cairn's tests (test tooling only; Debian's
/usr/bin/python3 and python3-numpy).

USAGE (from another test script):

    import sys; sys.path.insert(0, 'tests/tools')
    from gguf_writer import GGUFWriter, dequantize, quantize

    w = GGUFWriter('/tmp/x.gguf', 'bert')     # adds general.architecture
    w.add_kv('bert.block_count', 2)           # int -> u32 (i32 if negative,
                                              #   u64/i64 if it needs 64 bits)
    w.add_kv('bert.attention.layer_norm_epsilon', 1e-12)   # float -> f32
    w.add_kv('x.f64', 0.5, 'f64')             # explicit type: u8 i8 u16 i16
                                              #   u32 i32 f32 bool str u64 i64 f64
    w.add_kv('tokenizer.ggml.model', 'bert')  # str -> string (bytes: raw string)
    w.add_kv('x.flag', True)                  # bool -> bool
    w.add_kv('tokenizer.ggml.tokens', ['[PAD]', 'a'])        # string array
    w.add_kv('tokenizer.ggml.token_type', [3, 1], 'i32')     # numeric array:
                                              #   the type names the ELEMENTS
                                              #   (default i32 for ints, f32
                                              #   for floats, bool for bools)
    deq = w.add_tensor('token_embd.weight', np_array, 'q8_0')
    w.write()

add_tensor(name, array, qtype='f32') quantises a float array of 1 to 4
dimensions; numpy shape (rows, cols) becomes GGUF ne = [cols, rows] (ne[0] is
the row length, which must be a multiple of the type's block size: 32 for
q4_0..q8_0, 256 for q4_K/q5_K/q6_K). qtype is one of f32 f16 bf16 q4_0 q4_1
q5_0 q5_1 q8_0 q4_K q5_K q6_K. It RETURNS the dequantised float32 array (same
shape): exactly the weights a correct C reader sees, to feed a float64
reference. add_tensor_raw(name, raw_bytes, ne, ggml_type) stores bytes as
they are. Tensors are written in the order added, each at an offset that is a
multiple of general.alignment (default 32; GGUFWriter(path, arch,
alignment=64) adds the key), padding is zero bytes.

quantize(qtype, array) -> bytes and dequantize(qtype, raw_bytes, n) -> float32
array are module functions. The quantisers are simple round-to-nearest ones
(valid blocks, not ggml's best-error search); the dequantisers follow ggml's
float32 operation order, so a correct C decoder agrees bit for bit.

Command line (used by tests/unit_gguf.c and tests/unit_quant.c):
    gguf_writer.py demo OUT.gguf           fixed file with every kv kind
    gguf_writer.py quant OUT.gguf OUT.f32  one random tensor per type, and
                                           the NumPy dequantisation of each,
                                           concatenated, as raw float32
    gguf_writer.py f16 OUT.bin             float32 -> float16 oracle pairs
"""

import struct
import sys

import numpy as np

GGUF_MAGIC = b'GGUF'
GGUF_VERSION = 3

VTYPES = {'u8': 0, 'i8': 1, 'u16': 2, 'i16': 3, 'u32': 4, 'i32': 5, 'f32': 6,
          'bool': 7, 'str': 8, 'string': 8, 'array': 9, 'u64': 10, 'i64': 11,
          'f64': 12}
SCALAR_FMT = {0: '<B', 1: '<b', 2: '<H', 3: '<h', 4: '<I', 5: '<i', 6: '<f',
              7: '<B', 10: '<Q', 11: '<q', 12: '<d'}

# name: (ggml type number, elements per block, bytes per block)
QTYPES = {
    'f32': (0, 1, 4), 'f16': (1, 1, 2), 'bf16': (30, 1, 2),
    'q4_0': (2, 32, 18), 'q4_1': (3, 32, 20), 'q5_0': (6, 32, 22),
    'q5_1': (7, 32, 24), 'q8_0': (8, 32, 34),
    'q4_K': (12, 256, 144), 'q5_K': (13, 256, 176), 'q6_K': (14, 256, 210),
}
F32 = np.float32


def _vtype(v):
    if v is None:
        return None
    if isinstance(v, int):
        return v
    return VTYPES[v]


def _pack_str(s):
    b = s.encode('utf-8') if isinstance(s, str) else bytes(s)
    return struct.pack('<Q', len(b)) + b


def _infer_scalar(value):
    if isinstance(value, (bool, np.bool_)):
        return 7
    if isinstance(value, (int, np.integer)):
        v = int(value)
        if 0 <= v < 2**32:
            return 4
        if -2**31 <= v < 0:
            return 5
        if 0 <= v < 2**64:
            return 10
        return 11
    if isinstance(value, (float, np.floating)):
        return 6
    if isinstance(value, (str, bytes)):
        return 8
    raise TypeError('cannot infer a GGUF type for %r' % (value,))


def _pack_scalar(t, value):
    if t == 8:
        return _pack_str(value)
    if t == 7:
        return struct.pack('<B', 1 if value else 0)
    return struct.pack(SCALAR_FMT[t], value)


class GGUFWriter:
    """Collects metadata and tensors, then write() lays out the file."""

    def __init__(self, path, arch=None, alignment=None):
        self.path = path
        self.kv = []        # (key, packed type+value bytes)
        self.tensors = []   # (name, ne list, ggml type, raw bytes)
        self.alignment = 32 if alignment is None else alignment
        if alignment is not None:
            self.add_kv('general.alignment', alignment, 'u32')
        if arch is not None:
            self.add_kv('general.architecture', arch)

    def add_kv(self, key, value, vtype=None):
        """Add one pair. For lists vtype is the ELEMENT type."""
        t = _vtype(vtype)
        if isinstance(value, (list, tuple, np.ndarray)):
            vals = list(value)
            et = t
            if et is None:
                if vals and all(isinstance(v, (str, bytes)) for v in vals):
                    et = 8
                elif vals and all(isinstance(v, (bool, np.bool_))
                                  for v in vals):
                    et = 7
                elif all(isinstance(v, (int, np.integer)) for v in vals):
                    et = 5 if all(-2**31 <= int(v) < 2**31
                                  for v in vals) else 11
                else:
                    et = 6
            if et == 9:
                raise ValueError('nested arrays are not supported')
            body = struct.pack('<IIQ', 9, et, len(vals))
            if et == 8:
                body += b''.join(_pack_str(v) for v in vals)
            elif et == 7:
                body += bytes(1 if v else 0 for v in vals)
            else:
                body += np.asarray(vals).astype(SCALAR_FMT[et]).tobytes()
            self.kv.append((key, body))
            return
        if t is None:
            t = _infer_scalar(value)
        self.kv.append((key, struct.pack('<I', t) + _pack_scalar(t, value)))

    def add_tensor(self, name, array, qtype='f32'):
        """Quantise array into qtype; returns the dequantised float32."""
        a = np.asarray(array, dtype=np.float32)
        if a.ndim < 1 or a.ndim > 4:
            raise ValueError('tensor rank must be 1..4')
        gtype, blck, _ = QTYPES[qtype]
        if a.shape[-1] % blck:
            raise ValueError('%s: row length %d not a multiple of %d'
                             % (name, a.shape[-1], blck))
        raw = quantize(qtype, a.reshape(-1))
        self.add_tensor_raw(name, raw, list(reversed(a.shape)), gtype)
        return dequantize(qtype, raw, a.size).reshape(a.shape)

    def add_tensor_raw(self, name, raw, ne, ggml_type):
        self.tensors.append((name, [int(x) for x in ne], int(ggml_type),
                             bytes(raw)))

    def _pad(self, n):
        return (self.alignment - n % self.alignment) % self.alignment

    def to_bytes(self):
        out = bytearray(GGUF_MAGIC)
        out += struct.pack('<IQQ', GGUF_VERSION, len(self.tensors),
                           len(self.kv))
        for key, body in self.kv:
            out += _pack_str(key) + body
        offset = 0
        offsets = []
        for name, ne, gtype, raw in self.tensors:
            offsets.append(offset)
            out += _pack_str(name) + struct.pack('<I', len(ne))
            out += struct.pack('<%dQ' % len(ne), *ne)
            out += struct.pack('<IQ', gtype, offset)
            offset += len(raw) + self._pad(len(raw))
        if self.tensors:
            out += bytes(self._pad(len(out)))
            for (name, ne, gtype, raw), off in zip(self.tensors, offsets):
                out += raw + bytes(self._pad(len(raw)))
        return bytes(out)

    def write(self):
        data = self.to_bytes()
        with open(self.path, 'wb') as f:
            f.write(data)
        return len(data)


# ------------------------------------------------------------ conversions

def f32_to_bf16_bits(x):
    """Round to nearest even, NaN kept quiet (ggml's rule)."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    nan = (u & 0x7fffffff) > 0x7f800000
    r = ((u + 0x7fff + ((u >> 16) & 1)) >> 16) & 0xffff
    r = np.where(nan, (u >> 16) | 64, r)
    return r.astype(np.uint16)


def bf16_bits_to_f32(h):
    return (np.asarray(h, dtype=np.uint32) << 16).view(np.float32)


def _f16(x):
    """Round to the nearest float16, back as float32 (exactly)."""
    return np.asarray(x, dtype=np.float32).astype(np.float16).astype(F32)


def _f16_bytes(x):
    return np.asarray(x, dtype=np.float32).astype(np.float16).view(np.uint8)


# ------------------------------------------------------------- quantisers

def _blocks(x, n):
    return np.asarray(x, dtype=np.float32).reshape(-1, n)


def _absmax_signed(b):
    """Per row, the element with the largest magnitude, sign kept."""
    idx = np.argmax(np.abs(b), axis=1)
    return b[np.arange(b.shape[0]), idx]


def _inv(d):
    d = np.asarray(d, dtype=np.float64)
    with np.errstate(divide='ignore'):
        return np.where(d != 0, 1.0 / np.where(d != 0, d, 1.0), 0.0)


def _q_sym(b, nmax):
    """Q4_0 / Q5_0 scale: max-magnitude element maps to -nmax."""
    m = _absmax_signed(b).astype(np.float64)
    d = m / -nmax
    q = np.floor(b * _inv(d)[:, None] + nmax + 0.5)
    return d, np.clip(q, 0, 2 * nmax - 1).astype(np.uint32)


def _q_affine(b, nmax):
    """Q4_1 / Q5_1: min and (max-min)/nmax."""
    lo = b.min(axis=1).astype(np.float64)
    hi = b.max(axis=1).astype(np.float64)
    d = (hi - lo) / nmax
    q = np.floor((b - lo[:, None]) * _inv(d)[:, None] + 0.5)
    return d, lo, np.clip(q, 0, nmax).astype(np.uint32)


def _nibbles(q):
    """32 4-bit codes per row -> 16 bytes: low nibble j, high nibble j+16."""
    return ((q[:, :16] & 15) | ((q[:, 16:] & 15) << 4)).astype(np.uint8)


def _qh32(q):
    """Bit 4 of code j -> bit j of a little-endian u32."""
    bits = ((q >> 4) & 1).astype(np.uint64)
    v = (bits << np.arange(32, dtype=np.uint64)).sum(axis=1)
    return v.astype('<u4').view(np.uint8).reshape(-1, 4)


def _quant_q4_0(x):
    b = _blocks(x, 32)
    d, q = _q_sym(b, 8)
    return np.hstack([_f16_bytes(d).reshape(-1, 2), _nibbles(q)])


def _quant_q4_1(x):
    b = _blocks(x, 32)
    d, m, q = _q_affine(b, 15)
    return np.hstack([_f16_bytes(d).reshape(-1, 2),
                      _f16_bytes(m).reshape(-1, 2), _nibbles(q)])


def _quant_q5_0(x):
    b = _blocks(x, 32)
    d, q = _q_sym(b, 16)
    return np.hstack([_f16_bytes(d).reshape(-1, 2), _qh32(q), _nibbles(q)])


def _quant_q5_1(x):
    b = _blocks(x, 32)
    d, m, q = _q_affine(b, 31)
    return np.hstack([_f16_bytes(d).reshape(-1, 2),
                      _f16_bytes(m).reshape(-1, 2), _qh32(q), _nibbles(q)])


def _quant_q8_0(x):
    b = _blocks(x, 32)
    d = np.abs(b).max(axis=1).astype(np.float64) / 127
    q = np.clip(np.round(b * _inv(d)[:, None]), -127, 127).astype(np.int8)
    return np.hstack([_f16_bytes(d).reshape(-1, 2), q.view(np.uint8)])


def _pack_scales_k(sc, mn):
    """8 six-bit scales and mins -> 12 bytes, ggml's K-quant packing:
    bytes 0-3: sc[0..3] | top 2 bits of sc[4..7] in bits 6-7;
    bytes 4-7: mn[0..3] | top 2 bits of mn[4..7] in bits 6-7;
    bytes 8-11: low 4 bits of sc[4..7] | low 4 bits of mn[4..7] << 4."""
    sc = sc.astype(np.uint32)
    mn = mn.astype(np.uint32)
    out = np.zeros((sc.shape[0], 12), dtype=np.uint32)
    out[:, 0:4] = sc[:, 0:4] | ((sc[:, 4:8] >> 4) << 6)
    out[:, 4:8] = mn[:, 0:4] | ((mn[:, 4:8] >> 4) << 6)
    out[:, 8:12] = (sc[:, 4:8] & 15) | ((mn[:, 4:8] & 15) << 4)
    return out.astype(np.uint8)


def _quant_k_affine(x, nmax):
    """Shared by q4_K (nmax 15) and q5_K (31): returns header bytes
    (d, dmin, scales) and the codes, shape (nblocks, 256)."""
    b = _blocks(x, 256).reshape(-1, 8, 32).astype(np.float64)
    lo = np.minimum(b.min(axis=2), 0.0)           # sub-block min, <= 0
    hi = b.max(axis=2)
    scale = (hi - lo) / nmax                      # >= 0
    mins = -lo                                     # >= 0
    d = _f16(scale.max(axis=1) / 63).astype(np.float64)
    dmin = _f16(mins.max(axis=1) / 63).astype(np.float64)
    sc = np.clip(np.round(scale * _inv(d)[:, None]), 0, 63)
    mn = np.clip(np.round(mins * _inv(dmin)[:, None]), 0, 63)
    eff_d = d[:, None] * sc
    eff_m = dmin[:, None] * mn
    q = np.round((b + eff_m[:, :, None]) * _inv(eff_d)[:, :, None])
    q = np.clip(q, 0, nmax).astype(np.uint32).reshape(-1, 256)
    head = np.hstack([_f16_bytes(d).reshape(-1, 2),
                      _f16_bytes(dmin).reshape(-1, 2),
                      _pack_scales_k(sc, mn)])
    return head, q


def _k_nibbles(q):
    """256 codes -> 128 bytes: in each 64-chunk, byte l holds code l (low
    nibble) and code l+32 (high nibble)."""
    c = q.reshape(-1, 4, 2, 32)
    return ((c[:, :, 0, :] & 15) | ((c[:, :, 1, :] & 15) << 4)) \
        .astype(np.uint8).reshape(-1, 128)


def _quant_q4_K(x):
    head, q = _quant_k_affine(x, 15)
    return np.hstack([head, _k_nibbles(q)])


def _quant_q5_K(x):
    head, q = _quant_k_affine(x, 31)
    c = q.reshape(-1, 4, 2, 32)      # chunk k, half h, position l
    qh = np.zeros((q.shape[0], 32), dtype=np.uint32)
    for k in range(4):
        for h in range(2):
            qh |= ((c[:, k, h, :] >> 4) & 1) << (2 * k + h)
    return np.hstack([head, qh.astype(np.uint8), _k_nibbles(q)])


def _quant_q6_K(x):
    b = _blocks(x, 256).reshape(-1, 16, 16).astype(np.float64)
    idx = np.argmax(np.abs(b), axis=2)
    m = np.take_along_axis(b, idx[:, :, None], axis=2)[:, :, 0]
    s = m / -32                                   # sub-block scale
    d = _f16(np.abs(s).max(axis=1) / 127).astype(np.float64)
    sc = np.clip(np.round(s * _inv(d)[:, None]), -128, 127)
    eff = d[:, None] * sc
    q = np.clip(np.round(b * _inv(eff)[:, :, None]), -32, 31) + 32
    q = q.astype(np.uint32).reshape(-1, 2, 4, 32)  # half n, quarter k, l
    ql = np.zeros((q.shape[0], 2, 64), dtype=np.uint32)
    qh = np.zeros((q.shape[0], 2, 32), dtype=np.uint32)
    ql[:, :, 0:32] = (q[:, :, 0, :] & 15) | ((q[:, :, 2, :] & 15) << 4)
    ql[:, :, 32:64] = (q[:, :, 1, :] & 15) | ((q[:, :, 3, :] & 15) << 4)
    for k in range(4):
        qh |= ((q[:, :, k, :] >> 4) & 3) << (2 * k)
    return np.hstack([ql.reshape(-1, 128).astype(np.uint8),
                      qh.reshape(-1, 64).astype(np.uint8),
                      sc.astype(np.int8).view(np.uint8),
                      _f16_bytes(d).reshape(-1, 2)])


def quantize(qtype, array):
    """Float values (flattened; count a multiple of the block) -> bytes."""
    x = np.asarray(array, dtype=np.float32).reshape(-1)
    if qtype == 'f32':
        return x.astype('<f4').tobytes()
    if qtype == 'f16':
        return x.astype('<f2').tobytes()
    if qtype == 'bf16':
        return f32_to_bf16_bits(x).astype('<u2').tobytes()
    fn = {'q4_0': _quant_q4_0, 'q4_1': _quant_q4_1, 'q5_0': _quant_q5_0,
          'q5_1': _quant_q5_1, 'q8_0': _quant_q8_0, 'q4_K': _quant_q4_K,
          'q5_K': _quant_q5_K, 'q6_K': _quant_q6_K}[qtype]
    blck = QTYPES[qtype][1]
    if x.size % blck:
        raise ValueError('%d values: not a multiple of %d' % (x.size, blck))
    out = fn(x).astype(np.uint8)
    assert out.shape[1] == QTYPES[qtype][2]
    return out.tobytes()


# ----------------------------------------------------------- dequantisers
#
# Every step in float32, in the order ggml's reference C code evaluates it
# (no fused multiply-add), so that a correct C decoder matches exactly.

def _h(raw_cols):
    """Two bytes per row -> float32 from IEEE half."""
    return np.ascontiguousarray(raw_cols).view('<f2')[:, 0].astype(F32)


def _unnib(qs):
    """16 bytes -> 32 codes: low nibbles are elements 0..15."""
    return np.hstack([qs & 15, qs >> 4]).astype(np.int32)


def _qh_bits(qh4):
    v = np.ascontiguousarray(qh4).view('<u4')[:, 0].astype(np.uint64)
    return ((v[:, None] >> np.arange(32, dtype=np.uint64)) & 1) \
        .astype(np.int32)


def _k_scales(s):
    """12 packed bytes -> (sc[8], m[8]) as int32."""
    s = s.astype(np.int32)
    sc = np.zeros((s.shape[0], 8), dtype=np.int32)
    mn = np.zeros((s.shape[0], 8), dtype=np.int32)
    sc[:, 0:4] = s[:, 0:4] & 63
    mn[:, 0:4] = s[:, 4:8] & 63
    sc[:, 4:8] = (s[:, 8:12] & 15) | ((s[:, 0:4] >> 6) << 4)
    mn[:, 4:8] = (s[:, 8:12] >> 4) | ((s[:, 4:8] >> 6) << 4)
    return sc, mn


def _k_codes4(qs):
    """128 bytes -> 256 4-bit codes (low nibbles first within each 64)."""
    c = qs.reshape(-1, 4, 32).astype(np.int32)
    return np.stack([c & 15, c >> 4], axis=2).reshape(-1, 256)


def dequantize(qtype, raw, n):
    """raw bytes of n elements of qtype -> float32 array of n."""
    gtype, blck, bsz = QTYPES[qtype]
    raw = bytes(raw)
    if n % blck or len(raw) < n // blck * bsz:
        raise ValueError('bad size')
    raw = raw[:n // blck * bsz]
    if qtype == 'f32':
        return np.frombuffer(raw, dtype='<f4').astype(F32)
    if qtype == 'f16':
        return np.frombuffer(raw, dtype='<f2').astype(F32)
    if qtype == 'bf16':
        return bf16_bits_to_f32(np.frombuffer(raw, dtype='<u2'))
    a = np.frombuffer(raw, dtype=np.uint8).reshape(-1, bsz)
    if qtype == 'q8_0':
        d = _h(a[:, 0:2])
        q = a[:, 2:34].view(np.int8).astype(F32)
        y = q * d[:, None]
    elif qtype == 'q4_0':
        d = _h(a[:, 0:2])
        y = (_unnib(a[:, 2:18]) - 8).astype(F32) * d[:, None]
    elif qtype == 'q4_1':
        d, m = _h(a[:, 0:2]), _h(a[:, 2:4])
        y = _unnib(a[:, 4:20]).astype(F32) * d[:, None] + m[:, None]
    elif qtype == 'q5_0':
        d = _h(a[:, 0:2])
        q = _unnib(a[:, 6:22]) | (_qh_bits(a[:, 2:6]) << 4)
        y = (q - 16).astype(F32) * d[:, None]
    elif qtype == 'q5_1':
        d, m = _h(a[:, 0:2]), _h(a[:, 2:4])
        q = _unnib(a[:, 8:24]) | (_qh_bits(a[:, 4:8]) << 4)
        y = q.astype(F32) * d[:, None] + m[:, None]
    elif qtype in ('q4_K', 'q5_K'):
        d, dmin = _h(a[:, 0:2]), _h(a[:, 2:4])
        sc, mn = _k_scales(a[:, 4:16])
        d1 = d[:, None] * sc.astype(F32)           # float32 per sub-block
        m1 = dmin[:, None] * mn.astype(F32)
        if qtype == 'q4_K':
            q = _k_codes4(a[:, 16:144])
        else:
            q = _k_codes4(a[:, 48:176])
            qh = a[:, 16:48].astype(np.int32)      # (nb, 32)
            hi = np.zeros((a.shape[0], 256), dtype=np.int32)
            for j in range(8):                     # sub-block j: bit j
                hi[:, 32 * j:32 * j + 32] = ((qh >> j) & 1) << 4
            q = q + hi
        q = q.reshape(-1, 8, 32).astype(F32)
        y = d1[:, :, None] * q - m1[:, :, None]
    elif qtype == 'q6_K':
        ql = a[:, 0:128].reshape(-1, 2, 64).astype(np.int32)
        qh = a[:, 128:192].reshape(-1, 2, 32).astype(np.int32)
        sc = a[:, 192:208].view(np.int8).reshape(-1, 2, 8).astype(F32)
        d = _h(a[:, 208:210])
        q = np.zeros((a.shape[0], 2, 4, 32), dtype=np.int32)
        q[:, :, 0] = (ql[:, :, 0:32] & 15) | (((qh >> 0) & 3) << 4)
        q[:, :, 1] = (ql[:, :, 32:64] & 15) | (((qh >> 2) & 3) << 4)
        q[:, :, 2] = (ql[:, :, 0:32] >> 4) | (((qh >> 4) & 3) << 4)
        q[:, :, 3] = (ql[:, :, 32:64] >> 4) | (((qh >> 6) & 3) << 4)
        q = (q - 32).reshape(-1, 2, 8, 16).astype(F32)  # sub-block of 16
        y = (d[:, None, None] * sc)[:, :, :, None] * q
    else:
        raise ValueError(qtype)
    return np.asarray(y, dtype=F32).reshape(-1)


# ------------------------------------------------------------ test files

def write_demo(path):
    """The fixed file tests/unit_gguf.c reads back (keep the two in step)."""
    w = GGUFWriter(path, 'demo', alignment=64)
    w.add_kv('t.u8', 200, 'u8')
    w.add_kv('t.i8', -100, 'i8')
    w.add_kv('t.u16', 60000, 'u16')
    w.add_kv('t.i16', -30000, 'i16')
    w.add_kv('t.u32', 4000000000)
    w.add_kv('t.i32', -2000000000)
    w.add_kv('t.f32', 1.5)
    w.add_kv('t.bool', True)
    w.add_kv('t.false', False)
    w.add_kv('t.str', 'héllo wörld')
    w.add_kv('t.empty', '')
    w.add_kv('t.u64', 2**63 + 5)
    w.add_kv('t.i64', -2**62 - 3)
    w.add_kv('t.f64', 0.1, 'f64')
    w.add_kv('t.arr.str', ['[PAD]', '', 'ab', '\u4e2d\u6587', '\u2581x'])
    w.add_kv('t.arr.i32', [1, -2, 3], 'i32')
    w.add_kv('t.arr.f32', [0.5, -0.25], 'f32')
    w.add_kv('t.arr.u8', [1, 2, 255], 'u8')
    w.add_kv('t.arr.bool', [True, False, True])
    w.add_kv('t.arr.empty', [], 'i32')
    w.add_kv('t.arr.u64', [2**64 - 1], 'u64')
    w.add_kv('t.arr.f64', [1e300], 'f64')
    w.add_tensor('a.f32', np.arange(6, dtype=np.float32).reshape(2, 3))
    w.add_tensor('b.f16', np.array([1.0, -2.0, 0.5, 65504.0]), 'f16')
    w.add_tensor('c.q8_0', np.linspace(-1, 1, 64).reshape(1, 2, 32), 'q8_0')
    w.add_tensor('d.f32', np.array([[[[7.0]]]]))
    return w.write()


QUANT_SHAPES = [('f32', (3, 32)), ('f16', (2, 64)), ('bf16', (2, 64)),
                ('q4_0', (4, 64)), ('q4_1', (4, 64)), ('q5_0', (4, 64)),
                ('q5_1', (4, 64)), ('q8_0', (4, 64)), ('q4_K', (3, 512)),
                ('q5_K', (3, 512)), ('q6_K', (3, 512))]


def write_quant_case(path, ref_path, seed=1234):
    """One tensor per type with awkward data (mixed scales, an all-zero
    row, a one-signed row, a spike); ref_path gets NumPy's dequantisation
    of all of them, concatenated in order, as little-endian float32."""
    rng = np.random.default_rng(seed)
    w = GGUFWriter(path, 'quant-test')
    refs = []
    for qtype, shape in QUANT_SHAPES:
        a = rng.standard_normal(shape).astype(np.float32)
        a[0] *= 0.001
        a[1] = 0.0 if shape[0] > 2 else np.abs(a[1]) * 3
        if shape[0] > 2:
            a[2] = np.abs(a[2]) + 0.5
            a[2, 5] = 40.0
        deq = w.add_tensor(qtype + '.w', a, qtype)
        refs.append(deq.reshape(-1))
    w.write()
    np.concatenate(refs).astype('<f4').tofile(ref_path)


def write_f16_oracle(path, seed=99):
    """Pairs (float32 bits, numpy's float16 bits) as <u4 <u2 records:
    random bit patterns plus the values around every float16 boundary."""
    rng = np.random.default_rng(seed)
    bits = [rng.integers(0, 2**32, 200000, dtype=np.uint64)]
    # every float16 value, and its neighbours half an ulp away, as float32
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    f = h.view(np.float16).astype(np.float32).view(np.uint32)
    for delta in (-1, 0, 1, 0x1000 - 1, 0x1000, 0x1000 + 1):
        bits.append((f.astype(np.int64) + delta).astype(np.uint64))
    b = (np.concatenate(bits) & 0xffffffff).astype(np.uint32)
    with np.errstate(over='ignore', invalid='ignore'):
        r = b.view(np.float32).astype(np.float16).view(np.uint16)
    rec = np.zeros(b.size, dtype=[('f', '<u4'), ('h', '<u2')])
    rec['f'] = b
    rec['h'] = r
    rec.tofile(path)


def main(argv):
    if len(argv) == 3 and argv[1] == 'demo':
        write_demo(argv[2])
    elif len(argv) == 4 and argv[1] == 'quant':
        write_quant_case(argv[2], argv[3])
    elif len(argv) == 3 and argv[1] == 'f16':
        write_f16_oracle(argv[2])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
