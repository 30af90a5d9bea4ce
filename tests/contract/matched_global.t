# EVIDENCE-OF: recall --json / --explain name the
# matched terms when a global store exists too
$ cairn init >/dev/null
$ cairn write --scope global --kind fact "The office coffee machine is on floor three." >/dev/null; cairn write --kind fact --title "Deploys" "Deploys run from GitHub Actions to ECS." >/dev/null
$ cairn recall --json "github actions deploys" | jq -r '.hits[0].matched'
~ github
~ action
$ cairn recall --json "coffee machine" | jq -r '.hits[0].matched'
~ coffe
$ cairn recall --explain "github actions deploys" | grep -c 'matched: .*github'
> 1
