# EVIDENCE-OF: cairn reindex: settings stored in the store,
# incremental and resumable, identity switches drop old vectors only with
# --yes, new records wait for the next reindex, CAIRN_EMBED_* overrides,
# cairn model embed. The static model is written here (docs/EMBEDDINGS.md
# "Static file format"): each word one direction of 4.
$ cairn init >/dev/null
$ /usr/bin/python3 -c "import struct,sys; W=[('cat',(1,0,0,0)),('kitten',(.9,.43589,0,0)),('dog',(0,1,0,0)),('car',(0,0,1,0)),('road',(0,0,.8,.6))]; b=b'CAIRNVEC'+struct.pack('<IIQII',1,4,len(W),0,0)+b''.join(bytes([len(w)])+w.encode() for w,_ in W)+b''.join(struct.pack('<4e',*x) for _,x in W); open(sys.argv[1],'wb').write(b)" a.cairnvec && /usr/bin/python3 -c "import struct,sys; W=[('cat',(0,1,0,0)),('car',(1,0,0,0))]; b=b'CAIRNVEC'+struct.pack('<IIQII',1,4,len(W),0,0)+b''.join(bytes([len(w)])+w.encode() for w,_ in W)+b''.join(struct.pack('<4e',*x) for _,x in W); open(sys.argv[1],'wb').write(b)" b.cairnvec
$ for t in "the cat sleeps" "a kitten plays" "the dog barks" "the car on the road"; do cairn write --kind fact "$t"; done >/dev/null
# no settings yet
$ cairn reindex
? 1
e~ no embedding model configured: run 'cairn reindex --provider
$ cairn reindex --status --json | jq -c '[.provider, .records, .with_vector]'
> ["none",4,0]
# usage errors
$ cairn reindex --model a.cairnvec
? 2
$ cairn reindex --provider static
? 2
$ cairn reindex --provider static --model missing.cairnvec
? 1
e~ cannot find model file 'missing.cairnvec'
$ cairn reindex --batch 0
? 2
# first index: every record
$ cairn reindex --provider static --model a.cairnvec --batch 2 --json | jq -c '[.embedded, .total, .dropped, .with_vector, .identity.provider, .identity.dim, .identity.model]'
> [4,4,0,4,"static",4,"a.cairnvec"]
e~ reindex 4/4
# the path is stored absolute, so it works from anywhere in the workspace
$ cairn reindex --status | grep -c "^model: /"
> 1
# again: nothing to do
$ cairn reindex --json | jq -c '[.embedded, .total, .with_vector]'
> [0,0,4]
# a new record has no vector until the next reindex
$ cairn write --kind fact "kitten and cat" >/dev/null; cairn reindex --status --json | jq -c '[.records, .with_vector, .without_vector]'
> [5,4,1]
$ cairn reindex --status
~ ^vectors: 4 of 5 records \(1 without: run 'cairn reindex'\)$
$ cairn reindex --json | jq -c '[.embedded, .with_vector]'
> [1,5]
# an interrupted run resumes: vectors deleted behind cairn's back are redone
$ /usr/bin/python3 -c "import sqlite3; c=sqlite3.connect('.cairn/cairn.db'); c.execute('DELETE FROM vectors WHERE rid IN (SELECT rid FROM vectors LIMIT 3)'); c.commit()" && cairn reindex --json | jq -c '[.embedded, .total, .with_vector]'
> [3,3,5]
# changing a record's text drops its vector
$ id=$(cairn list --json | jq -r '.[] | select(.body == "the dog barks") | .id'); cairn revise "$id" --body "the dog runs" >/dev/null && cairn reindex --status --json | jq -c '.without_vector'
> 1
# embedding by hand uses the stored settings
$ cairn model embed --cosine cat kitten
~ ^0\.900[0-9]*$
$ cairn model embed cat
> [1,0,0,0]
# another model: refused without --yes (stdin is not a terminal)
$ cairn reindex --provider static --model b.cairnvec
? 1
e~ rerun with --yes
$ cairn reindex --status --json | jq -c '[.with_vector, .identity.revision == null]'
> [4,false]
$ cairn reindex --provider static --model b.cairnvec --yes --json | jq -c '[.embedded, .dropped, .with_vector]'
> [5,4,5]
e~ dropped 4 vectors of the previous identity
# instructions are part of the identity
$ cairn reindex --provider static --model b.cairnvec --query-instruction "car " --yes --json | jq -c '[.dropped, .identity.query_instruction]'
> [5,"car "]
# "car " + "cat": without counts SIF weighs by rank (Zipf): car (rank 2)
# counts about twice cat (rank 1)
$ cairn model embed --query cat
~ ^\[0\.894[0-9]*,0\.447[0-9]*,0,0\]$
# the environment overrides the stored settings for one process
$ CAIRN_EMBED_MODEL=$PWD/a.cairnvec CAIRN_EMBED_QUERY_INSTRUCTION= cairn model embed --query cat
> [1,0,0,0]
$ CAIRN_EMBED_PROVIDER=nonsense cairn reindex
? 1
e~ unknown embedding provider 'nonsense'
# the global store is indexed too, under the same identity
$ cairn write --kind fact --scope global "a global cat" >/dev/null; cairn reindex --json | jq -c '[.embedded, .with_vector]'
> [1,6]
$ /usr/bin/python3 -c "import sqlite3,glob; c=sqlite3.connect(glob.glob('$T/global/*.db')[0]); print(c.execute('SELECT count(*) FROM vectors').fetchone()[0], c.execute(\"SELECT v FROM meta WHERE k='vector.identity'\").fetchone()[0] == sqlite3.connect('.cairn/cairn.db').execute(\"SELECT v FROM meta WHERE k='vector.identity'\").fetchone()[0])"
> 1 True
# off: drops everything (with --yes)
$ cairn reindex --provider none
? 1
e~ rerun with --yes
$ cairn reindex --provider none --yes
> embedding off: 6 vectors dropped
$ cairn reindex --status --json | jq -c '[.provider, .with_vector, .identity]'
> ["none",0,null]
$ cairn reindex --help
~ ^usage: cairn reindex
~ CAIRN_EMBED_
$ cairn model
? 2
$ cairn model frobnicate
? 2
$ cairn model --help
~ ^usage: cairn model pull NAME
$ printf 'not a gguf' > x.gguf; cairn model info x.gguf
? 1
# a record id longer than the vector cache keeps (255 bytes) is embedded
# but searched lexically only: recall does not call the store damaged
$ printf '{"id":"%s","kind":"fact","title":"Long id","body":"the cat with a long id"}\n' "$(printf 'x%.0s' $(seq 300))" | cairn import >/dev/null && cairn reindex --provider static --model a.cairnvec --yes >/dev/null 2>&1; cairn recall --json "kitten" 2>/dev/null | jq -r '.hits | length > 0'
> true
