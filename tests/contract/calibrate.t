# EVIDENCE-OF: the floor is calibrated from probes and stored
$ cairn init >/dev/null
$ printf '%s\n' '{"id":"a","kind":"adr","title":"Use PostgreSQL for orders","body":"Orders are stored in PostgreSQL on RDS."}' '{"id":"b","kind":"fact","title":"Deploys","body":"Deploys run from GitHub Actions to ECS for every service."}' | cairn import >/dev/null
$ printf '%s\n' '{"text":"which service handles payments refunds?"}' 'how do I bake bread?' > probes.jsonl; cairn calibrate --probes probes.jsonl
~ ^floor 0\.12 from 2 probe questions \(median answerability; highest 0\.[0-9]{2}\)$
~ ^let through: 1 probe above the floor \(recall answers them\):$
~ ^  0\.[0-9]{2}  which service handles payments refunds\?$
# the median, not the highest probe, sets the floor, and what it
# lets through is named: that probe shares "service" with a record
$ cairn recall --json "which service handles payments refunds?" | jq -c '[(.hits|length), .floor_calibrated]'
> [1,true]
$ cairn recall --json "how do I bake bread?" | jq -c '[(.hits|length), .floor_calibrated]'
> [0,true]
$ cairn recall --json "orders in PostgreSQL" | jq -r '.hits[0].record.id'
> a
# without a probe file: the built-in off-topic probes, English and Chinese
$ cairn calibrate --json | jq -c '[.builtin, .probes > 10, .floor >= 0.12]'
> [true,true,true]
$ printf '{"nope":1}\n' > bad.jsonl; cairn calibrate --probes bad.jsonl
? 1
e~ bad.jsonl:1: no "text" field
# EVIDENCE-OF: hybrid recall driven by vectors the test chooses: a
# static word-vector model written here (each word one direction of 8), the
# cosine floor calibrated per vector identity, the overwhelming BM25 hit,
# --explain and receipts. Without vectors recall stays lexical only.
$ /usr/bin/python3 -c "import struct,sys; e=lambda *p: [dict(p).get(i,0.0) for i in range(8)]; W=[('postgres',e((0,1))),('database',e((0,1))),('storage',e((0,.8),(5,.6))),('deploy',e((1,1))),('release',e((1,1))),('bread',e((0,.28),(2,.96))),('sourdough',e((0,.28),(2,.96))),('bake',e((2,1))),('oven',e((2,1))),('cache',e((3,1))),('redis',e((3,1)))]+[('zz%d'%i,e((7,1))) for i in range(len(sys.argv)-2)]; b=b'CAIRNVEC'+struct.pack('<IIQII',1,8,len(W),1,0)+b''.join(bytes([len(w)])+w.encode() for w,_ in W)+b''.join(struct.pack('<Q',1000) for _ in W)+b''.join(struct.pack('<8e',*x) for _,x in W); open(sys.argv[1],'wb').write(b)" toy.cairnvec && cp toy.cairnvec keep.cairnvec
$ printf '%s\n' '{"id":"pg","kind":"adr","title":"Use Postgres","body":"The Postgres cluster holds the orders."}' '{"id":"deploy","kind":"procedure","title":"Deploying","body":"Merges to main deploy through a release pipeline."}' '{"id":"cache","kind":"fact","title":"Cache","body":"The cache runs on Redis."}' '{"id":"err","kind":"note","title":"Error E4711","body":"E4711 means the disk of the primary is full; E4711 clears once space is freed."}' '{"id":"mttr","kind":"note","title":"Recovery","body":"The mean time to recovery is one hour."}' > recs.jsonl; for i in $(seq 1 60); do printf '{"id":"s%02d","kind":"note","title":"Storage note %d","body":"Storage tables for shard %d."}\n' $i $i $i; done >> recs.jsonl; cairn import < recs.jsonl
> imported 65 records, skipped 0 existing
# no vectors yet: lexical only ("database" is in no record's text)
$ cairn recall --json "which database?" | jq -c '[.hybrid, (.hits | length)]'
> [false,0]
$ cairn reindex --provider static --model toy.cairnvec --json 2>/dev/null | jq -c '[.embedded, .with_vector]'
> [67,67]
# the dense pool finds it, BM25 has nothing, but until a cosine floor is
# calibrated for the model its cosine (1.0 here, as any model's might be
# for an unrelated record) keeps nothing lexical evidence drops: the model
# orders hits, it does not add them (negative control of that rule)
$ cairn recall --json --no-floor "which database?" 2>/dev/null | jq -c '[.hybrid, .hits[0].record.id, .hits[0].dense_rank, .hits[0].bm25_rank, .cos_floor_calibrated]'
> [true,"pg",1,0,false]
$ cairn recall --json "which database?" 2>/dev/null | jq -c '[.hybrid, (.hits | length), .cos_floor_calibrated]'
> [true,0,false]
$ cairn recall "which database?"
e~ no cosine floor calibrated for static/toy.cairnvec@[0-9a-f]{12}/8: the model orders the hits lexical recall finds but adds none
# a no-answer question's weak cosines stay out as well
$ cairn recall --json "bake bread in the oven" 2>/dev/null | jq -c '[(.hits | length)]'
> [0]
$ printf '%s\n' 'sourdough bread' 'how long to bake' > probes2.txt; cairn calibrate --probes probes2.txt
> floor 0.12 from 2 probe questions (median answerability; highest 0.00)
> cosine floor 0.29 for the configured vector identity
# calibrated, the cosine keeps what is above the floor and nothing else
# (negative control of the cosine floor)
$ cairn recall --json "which database?" 2>/dev/null | jq -c '[.hits[0].record.id, .hits[0].dense_rank, .hits[0].bm25_rank, .hits[0].basis, .cos_floor_calibrated]'
> ["pg",1,0,"cosine",true]
$ cairn recall --json "bake bread in the oven" | jq -c '[(.hits | length), .cos_floor, .cos_floor_calibrated, .notice]'
> [0,0.29,true,null]
$ cairn recall "bake bread in the oven"
~ ^no record answers this \(cosine floor 0\.29, calibrated; 67 weaker matches below the floors\)$
$ cairn recall --json "which database?" | jq -c '[.hits[0].record.id, .hits[0].relevance, .hits[1].record.id]'
> ["pg",1,"s01"]
# the overwhelming BM25 hit: E4711 has no vector direction (cosine 0, dense
# rank 64 of the pool, worse than 50) and BM25 2x the second: pinned first
# (removing the pin, or testing pool membership, drops it under the floor)
# (the adr's weight no longer lifts pg over mttr, which says "mean": issue
# 17, weights break ties only)
$ cairn recall --json "what does E4711 mean for the database" | jq -c '[.hits[0].record.id, .hits[0].pinned, .hits[0].basis, .hits[0].dense_rank > 50, ([.hits[].record.id] | index("pg") != null)]'
> ["err",true,"lexical",true,true]
# --explain names every step
$ cairn recall --explain "what does E4711 mean for the database"
~ \| bm25: rank 1, raw [0-9.]+ \(title x2\); matched: (.* )?e4711( |$)
~ \| dense: rank 6[0-9], cosine 0\.0000
# the fusion of z-scores: 67 candidates with both scores
~ \| fused: [0-9.]+ = 1 x z\(bm25\) = [0-9.]+, \+ 1 x z\(cosine\) = -?[0-9.]+ \(z-scores over the candidates, shifted above the lowest\)
~ \| pin: yes, overwhelming BM25 hit \(dense rank worse than 50, raw >= 1\.5x the second\)
~ \| answer: [0-9.]+ = matched [0-9.]+ / question [0-9.]+ of IDF mass
~ \| floor: answer [0-9.]+ > 0\.12 \(each hit: the lower of the lexical floor [0-9.]+, calibrated, and 0\.12\) -> kept, relevance [0-9.]+
~ \| floor: cosine 1\.0000 > 0\.29 \(calibrated\) -> kept, relevance 1\.0000
~ \| weight: 2\.00 \(adr, accepted\)
~ \| decay: 1\.0000 \(undated\)
~ \| score: [0-9.]+ = weight\^0\.1 x decay x fused/best
~ ^mode: hybrid
# receipts keep the per-signal figures
$ r=$(cairn recall --json "which database?" | jq -r .receipt); cairn receipt --json "$r" | jq -c '[.provider, .ids[0], .hits[0].dense_rank, .hits[0].cosine, .hits[0].basis, (.revision | test("vectors:static/toy.cairnvec"))]'
> ["bm25+dense","pg",1,1,"cosine",true]
# the exact drawer comes first, relevance 1, even without a vector (written
# after the reindex: "Runbook" shares no word with the question)
$ cairn write --kind fact --key ops:e4711 --title "Runbook" "Page the on-call engineer." >/dev/null; cairn recall --json "ops:e4711" 2>/dev/null | jq -c '[.hits[0].record.key, .hits[0].exact_key, .hits[0].basis, .hits[0].has_vector, .hits[0].relevance]'
> ["ops:e4711",true,"key",false,1]
# another model (one more word: another file hash, another identity): the
# vectors are refused until reindexed, and the floor is not carried over
$ /usr/bin/python3 -c "import struct,sys; e=lambda *p: [dict(p).get(i,0.0) for i in range(8)]; W=[('postgres',e((0,1))),('database',e((0,1))),('storage',e((0,.8),(5,.6))),('deploy',e((1,1))),('release',e((1,1))),('bread',e((0,.28),(2,.96))),('sourdough',e((0,.28),(2,.96))),('bake',e((2,1))),('oven',e((2,1))),('cache',e((3,1))),('redis',e((3,1)))]+[('zz%d'%i,e((7,1))) for i in range(len(sys.argv)-2)]; b=b'CAIRNVEC'+struct.pack('<IIQII',1,8,len(W),1,0)+b''.join(bytes([len(w)])+w.encode() for w,_ in W)+b''.join(struct.pack('<Q',1000) for _ in W)+b''.join(struct.pack('<8e',*x) for _,x in W); open(sys.argv[1],'wb').write(b)" toy2.cairnvec extra
$ CAIRN_EMBED_MODEL=$PWD/toy2.cairnvec cairn recall "which database?"
? 1
e~ reindex
$ cairn reindex --provider static --model toy2.cairnvec --yes --json 2>/dev/null | jq -c '[.dropped, .embedded]'
> [67,68]
$ cairn recall --json "bake bread in the oven" 2>/dev/null | jq -c '[.cos_floor, .cos_floor_calibrated, (.hits | length)]'
> [0,false,0]
$ cairn recall "bake bread in the oven"
e~ the cosine floor 0\.29 was calibrated for another vector identity and is not used with static/toy2\.cairnvec
$ cairn calibrate --probes probes2.txt --json
> {"floor":0.12,"probes":2,"builtin":false,"probe_max":0.0000,"let_through":0,"shown":[],"cosine_floor":0.29}
$ cairn recall --json "bake bread in the oven" | jq -c '[(.hits | length), .cos_floor_calibrated]'
> [0,true]
