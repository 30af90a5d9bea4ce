# EVIDENCE-OF: issue 3 -- the floor is calibrated from probes and stored
$ cairn init >/dev/null
$ printf '%s\n' '{"id":"a","kind":"adr","title":"Use PostgreSQL for orders","body":"Orders are stored in PostgreSQL on RDS."}' '{"id":"b","kind":"fact","title":"Deploys","body":"Deploys run from GitHub Actions to ECS for every service."}' | cairn import >/dev/null
$ printf '%s\n' '{"text":"which service handles payments refunds?"}' 'how do I bake bread?' > probes.jsonl; cairn calibrate --probes probes.jsonl
~ ^lexical floor 0\.[0-9]{2} from 2 probe questions$
$ cairn recall --json "which service handles payments refunds?" | jq -c '[(.hits|length), .floor_calibrated]'
> [0,true]
$ cairn recall --json "orders in PostgreSQL" | jq -r '.hits[0].record.id'
> a
$ cairn calibrate
? 2
$ printf '{"nope":1}\n' > bad.jsonl; cairn calibrate --probes bad.jsonl
? 1
e~ bad.jsonl:1: no "text" field
