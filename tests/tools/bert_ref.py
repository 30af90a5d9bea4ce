#!/usr/bin/python3
"""bert_ref.py -- a float64 NumPy forward pass of a BERT-family GGUF model
in llama.cpp's `bert` layout: the reference that tests/unit_bert.c compares
cairn's C runtime (src/model/bert.c) with (test tooling only; Debian's
/usr/bin/python3 and python3-numpy).

It shares nothing with the C code: the GGUF is read by the small parser
below, tensors are decoded by the independent NumPy dequantiser of
tests/tools/gguf_writer.py, and the arithmetic is float64 throughout.

USAGE

    bert_ref.py MODEL.gguf IDS OUT [--pool mean|cls|last|rank] [--max N]

IDS is a text file, one sequence per line, token ids separated by spaces.
Each sequence is truncated to N tokens (default: bert.context_length).
OUT gets one line per sequence: the L2-normalised pooled embedding (mean /
cls / last), or for rank the single classifier logit, as %.9e numbers.
The pooling is the file's bert.pooling_type (none or absent: mean) unless
--pool overrides it.

The model (post-LayerNorm BERT, as in BertModel / XLMRobertaModel):

    x = LN(tok[id] + pos[i] + type[0]; token_embd_norm), i = 0..n-1
    per layer:  q, k, v = x Wq^T + bq, ...  (attn_qkv split in Q, K, V)
                a = concat_h softmax(q_h k_h^T / sqrt(d)) v_h
                x = LN(x + a Wo^T + bo; attn_output_norm)
                x = LN(x + gelu(x Wup^T + bup) Wdown^T + bdown;
                       layer_output_norm),   gelu(u) = u/2 (1 + erf(u/sqrt2))
    rank: s = cls_out (tanh(cls x[0] + cls_b)) + cls_out_b   (row 0)
"""

import math
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gguf_writer import dequantize, QTYPES  # noqa: E402

TYPE_NAMES = {v[0]: k for k, v in QTYPES.items()}
SCALARS = {0: '<B', 1: '<b', 2: '<H', 3: '<h', 4: '<I', 5: '<i', 6: '<f',
           7: '<B', 10: '<Q', 11: '<q', 12: '<d'}


class Reader:
    """A minimal GGUF v2/v3 reader: metadata and tensor infos, then data."""

    def __init__(self, path):
        with open(path, 'rb') as f:
            self.buf = f.read()
        self.pos = 0
        if self.buf[:4] != b'GGUF':
            raise ValueError('not a GGUF file')
        self.pos = 4
        version, n_tensors, n_kv = self.unpack('<IQQ')
        if version not in (2, 3):
            raise ValueError('GGUF version %d' % version)
        self.kv = {}
        for _ in range(n_kv):
            key = self.string()
            (t,) = self.unpack('<I')
            self.kv[key] = self.value(t)
        infos = []
        for _ in range(n_tensors):
            name = self.string()
            (nd,) = self.unpack('<I')
            ne = list(self.unpack('<%dQ' % nd))
            gtype, off = self.unpack('<IQ')
            infos.append((name, ne, gtype, off))
        align = int(self.kv.get('general.alignment', 32))
        start = (self.pos + align - 1) // align * align
        self.tensors = {}
        for name, ne, gtype, off in infos:
            self.tensors[name] = (ne, gtype, start + off)

    def unpack(self, fmt):
        vals = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += struct.calcsize(fmt)
        return vals

    def string(self):
        (n,) = self.unpack('<Q')
        s = self.buf[self.pos:self.pos + n]
        self.pos += n
        return s.decode('utf-8', 'replace')

    def value(self, t):
        if t == 8:
            return self.string()
        if t == 9:
            et, n = self.unpack('<IQ')
            return [self.value(et) for _ in range(n)]
        (v,) = self.unpack(SCALARS[t])
        return bool(v) if t == 7 else v

    def tensor(self, name):
        """The tensor as float64, NumPy shape = reversed ne; None if absent."""
        if name not in self.tensors:
            return None
        ne, gtype, off = self.tensors[name]
        qt = TYPE_NAMES[gtype]
        _, blck, bsz = QTYPES[qt]
        n = 1
        for d in ne:
            n *= d
        raw = self.buf[off:off + n // blck * bsz]
        a = dequantize(qt, raw, n).astype(np.float64)
        return a.reshape(list(reversed(ne)))


def layer_norm(x, w, b, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


_erf = np.vectorize(math.erf)


def gelu(u):
    return 0.5 * u * (1.0 + _erf(u / math.sqrt(2.0)))


class Model:
    def __init__(self, path):
        r = Reader(path)
        kv = r.kv
        if kv.get('general.architecture') != 'bert':
            raise ValueError('not a bert model')
        self.E = int(kv['bert.embedding_length'])
        self.H = int(kv['bert.attention.head_count'])
        self.NL = int(kv['bert.block_count'])
        self.C = int(kv['bert.context_length'])
        self.eps = float(kv['bert.attention.layer_norm_epsilon'])
        p = int(kv.get('bert.pooling_type', 1))
        self.pool = {0: 'mean', 1: 'mean', 2: 'cls', 3: 'last',
                     4: 'rank'}[p]
        t = r.tensor
        self.tok = t('token_embd.weight')
        types = t('token_types.weight')
        self.type0 = types[0] if types is not None else np.zeros(self.E)
        self.pos = t('position_embd.weight')
        self.nw, self.nb = t('token_embd_norm.weight'), \
            t('token_embd_norm.bias')
        E = self.E
        self.layers = []
        for i in range(self.NL):
            g = lambda s: t('blk.%d.%s' % (i, s))  # noqa: E731
            L = {}
            qkv = g('attn_qkv.weight')
            if qkv is not None:
                qb = g('attn_qkv.bias')
                if qb is None:
                    qb = np.zeros(3 * E)
                L['wq'], L['wk'], L['wv'] = qkv[:E], qkv[E:2 * E], qkv[2 * E:]
                L['bq'], L['bk'], L['bv'] = qb[:E], qb[E:2 * E], qb[2 * E:]
            else:
                for n in 'qkv':
                    L['w' + n] = g('attn_%s.weight' % n)
                    L['b' + n] = g('attn_%s.bias' % n)
            L['wo'], L['bo'] = g('attn_output.weight'), g('attn_output.bias')
            L['n1w'] = g('attn_output_norm.weight')
            L['n1b'] = g('attn_output_norm.bias')
            L['wu'], L['bu'] = g('ffn_up.weight'), g('ffn_up.bias')
            L['wd'], L['bd'] = g('ffn_down.weight'), g('ffn_down.bias')
            L['n2w'] = g('layer_output_norm.weight')
            L['n2b'] = g('layer_output_norm.bias')
            self.layers.append(L)
        self.cls_w, self.cls_b = t('cls.weight'), t('cls.bias')
        self.out_w, self.out_b = t('cls.output.weight'), t('cls.output.bias')

    def hidden(self, ids):
        n = len(ids)
        E, H = self.E, self.H
        d = E // H
        x = self.tok[ids] + self.pos[:n] + self.type0
        x = layer_norm(x, self.nw, self.nb, self.eps)
        for L in self.layers:
            q = x @ L['wq'].T + L['bq']
            k = x @ L['wk'].T + L['bk']
            v = x @ L['wv'].T + L['bv']
            a = np.zeros((n, E))
            for h in range(H):
                s = slice(h * d, (h + 1) * d)
                sc = q[:, s] @ k[:, s].T / math.sqrt(d)
                sc = np.exp(sc - sc.max(axis=1, keepdims=True))
                sc /= sc.sum(axis=1, keepdims=True)
                a[:, s] = sc @ v[:, s]
            x = layer_norm(x + a @ L['wo'].T + L['bo'], L['n1w'], L['n1b'],
                           self.eps)
            f = gelu(x @ L['wu'].T + L['bu']) @ L['wd'].T + L['bd']
            x = layer_norm(x + f, L['n2w'], L['n2b'], self.eps)
        return x

    def run(self, ids, pool):
        x = self.hidden(ids)
        if pool == 'rank':
            h = x[0]
            if self.cls_w is not None:
                b = self.cls_b if self.cls_b is not None else 0.0
                h = np.tanh(self.cls_w @ h + b)
            if self.out_w is not None:
                b = self.out_b[0] if self.out_b is not None else 0.0
                return np.array([self.out_w[0] @ h + b])
            return np.array([h[0]])
        if pool == 'cls':
            v = x[0]
        elif pool == 'last':
            v = x[-1]
        else:
            v = x.mean(axis=0)
        nrm = np.sqrt((v * v).sum())
        return v / nrm if nrm > 0 else v


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    path, ids_path, out_path = argv[:3]
    pool = None
    maxn = None
    rest = argv[3:]
    while rest:
        if rest[0] == '--pool':
            pool = rest[1]
        elif rest[0] == '--max':
            maxn = int(rest[1])
        else:
            sys.stderr.write('unknown option %s\n' % rest[0])
            return 2
        rest = rest[2:]
    m = Model(path)
    pool = pool or m.pool
    maxn = min(maxn or m.C, m.C)
    with open(ids_path) as f, open(out_path, 'w') as out:
        for line in f:
            ids = [int(t) for t in line.split()][:maxn]
            if not ids:
                continue
            v = m.run(ids, pool)
            out.write(' '.join('%.9e' % x for x in v) + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
