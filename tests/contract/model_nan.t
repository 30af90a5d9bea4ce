# EVIDENCE-OF: issue 31 -- a model that yields NaN leaves memory on: cairn
# reindex refuses it before anything changes (settings and vectors as they
# were), and recall and the hook fall back to lexical recall with a
# one-line note whenever the model fails. Static models as in reindex.t:
# a.cairnvec is sound, nan.cairnvec gives "cat" a NaN direction.
$ cairn init >/dev/null
$ /usr/bin/python3 -c "import struct,sys; W=[('cat',(1,0,0,0)),('kitten',(.9,.43589,0,0)),('dog',(0,1,0,0)),('car',(0,0,1,0)),('road',(0,0,.8,.6))]; b=b'CAIRNVEC'+struct.pack('<IIQII',1,4,len(W),0,0)+b''.join(bytes([len(w)])+w.encode() for w,_ in W)+b''.join(struct.pack('<4e',*x) for _,x in W); open(sys.argv[1],'wb').write(b)" a.cairnvec && /usr/bin/python3 -c "import struct,sys; W=[('cat',(float('nan'),0,0,0)),('dog',(0,1,0,0))]; b=b'CAIRNVEC'+struct.pack('<IIQII',1,4,len(W),0,0)+b''.join(bytes([len(w)])+w.encode() for w,_ in W)+b''.join(struct.pack('<4e',*x) for _,x in W); open(sys.argv[1],'wb').write(b)" nan.cairnvec
$ for t in "the cat sleeps" "a kitten plays" "the dog barks" "the car on the road"; do cairn write --kind fact "$t"; done >/dev/null && cairn reindex --provider static --model a.cairnvec >/dev/null 2>&1 && cairn reindex --status --json | jq -c '[.provider, (.model | endswith("/a.cairnvec")), .with_vector]'
> ["static",true,4]
# reindex with the NaN model: refused, with the reason, nothing changed
$ cairn reindex --provider static --model nan.cairnvec --yes
? 1
e~ non-finite value \(NaN or infinity\)
e~ this model is refused: nothing was changed
$ cairn reindex --status --json | jq -c '[.provider, (.model | endswith("/a.cairnvec")), .with_vector]'
> ["static",true,4]
# the configured model's file turns into the NaN one: recall answers
# lexically (exit 0) and says so in one line
$ cp nan.cairnvec a.cairnvec && cairn recall "where does the cat sleep"
~ the cat sleeps
e~ ^cairn: note: lexical recall only: embedding the question: .*non-finite
$ cairn recall "where does the cat sleep" 2>&1 >/dev/null | wc -l
> 1
$ cairn recall --json "where does the cat sleep" 2>/dev/null | jq -c '[.hybrid, (.hits | length), (.notice | startswith("lexical recall only"))]'
> [false,1,true]
# ... and the hook injects the record, hook.log marks the fallback
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"where does the cat sleep?"}' "$PWD" | cairn hook --local | jq -r .hookSpecificOutput.additionalContext | grep -c 'the cat sleeps'; tail -1 .cairn/hook.log
~ ^1$
~ injected.*embed=down\(lexical\)
# a model file gone altogether: lexical too, not an error
$ rm a.cairnvec && cairn recall "where does the cat sleep"
~ the cat sleeps
e~ lexical recall only
