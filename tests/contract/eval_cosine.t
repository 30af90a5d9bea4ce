# EVIDENCE-OF: cairn eval reports the cosine floor that gates
# hybrid recall: calibrated from probes.jsonl, or 0 and saying so when the
# set has no probes (then the cosine keeps no hit: it only orders them);
# lexical runs report null. The static model is written
# here (each word one direction of 4).
$ /usr/bin/python3 -c "import struct,sys; W=[('cat',(1,0,0,0)),('kitten',(.9,.43589,0,0)),('dog',(0,1,0,0)),('car',(0,0,1,0)),('road',(0,0,.8,.6))]; b=b'CAIRNVEC'+struct.pack('<IIQII',1,4,len(W),0,0)+b''.join(bytes([len(w)])+w.encode() for w,_ in W)+b''.join(struct.pack('<4e',*x) for _,x in W); open(sys.argv[1],'wb').write(b)" a.cairnvec
$ mkdir d && printf '%s\n' '{"id":"c1","text":"the cat sleeps"}' '{"id":"c2","text":"the dog barks"}' '{"id":"c3","text":"a car on the road"}' > d/corpus.jsonl && printf '%s\n' '{"id":"q1","text":"where is the kitten","answers":["c1"]}' '{"id":"q2","text":"a road trip","answers":["c3"]}' > d/queries.jsonl
$ cairn eval d --json --quiet | jq -c '[.cos_floor, .cos_floor_calibrated]'
> [null,0]
$ CAIRN_EMBED_PROVIDER=static CAIRN_EMBED_MODEL=$PWD/a.cairnvec cairn eval d --json --quiet | jq -c '[.cos_floor, .cos_floor_calibrated]'
> [0,0]
$ CAIRN_EMBED_PROVIDER=static CAIRN_EMBED_MODEL=$PWD/a.cairnvec cairn eval d --quiet | grep '^cosine'
> cosine   floor 0.00 (0: not calibrated (no probes): the cosine orders hits, keeps none)
$ printf '%s\n' '{"text":"the dog"}' > d/probes.jsonl; CAIRN_EMBED_PROVIDER=static CAIRN_EMBED_MODEL=$PWD/a.cairnvec cairn eval d --json --quiet | jq -c '[.cos_floor > 0.9, .cos_floor_calibrated]'
> [true,1]
$ CAIRN_EMBED_PROVIDER=static CAIRN_EMBED_MODEL=$PWD/a.cairnvec cairn eval d --quiet | grep '^cosine'
~ ^cosine   floor (0\.9[0-9]|1\.00) \(calibrated from probes\.jsonl\)$
