#!/usr/bin/env bash
# Runs `etcdbench check` on every control-plane node, one node at a time, as
# one Kubernetes Job per node made from job.yaml, and saves each node's log
# and result JSON. See docs/kubernetes.md.
#
#   deploy/kubernetes/run.sh --image registry.example.com/etcdbench:1.2.3
#   deploy/kubernetes/run.sh --node cp-1 --quick
#   deploy/kubernetes/run.sh --node cp-1 --print      # only print the Job
#
# Exit code: the highest of the nodes' etcdbench exit codes (0 every verdict
# PASS or WARN, 1 a FAIL, 2 or 3 a run that could not be done), 3 when a Job
# ended without an exit code (not scheduled, deadline), 2 for a usage error.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ns=etcdbench
image=""
host_path=""
out=etcdbench-results
print=0
nodes=()
extra=()

usage() {
	cat <<'USAGE'
usage: run.sh [--image IMAGE] [--host-path DIR] [--node NAME]... [--out DIR]
              [--quick] [--print] [-- ETCDBENCH-FLAGS...]

  --image IMAGE    the image built from the Dockerfile, in your registry
                   (default: job.yaml's etcdbench:0.1.0-dev)
  --host-path DIR  the scratch directory on each node, on the filesystem of
                   etcd's data-dir (default: /var/lib/etcd-etcdbench)
  --node NAME      only this node (repeatable; default: every node labelled
                   node-role.kubernetes.io/control-plane)
  --out DIR        where NODE.log and NODE.json go (default: etcdbench-results)
  --quick          etcdbench check --quick (about 20 s per node)
  --print          print the Jobs instead of creating them
  -- FLAGS         more flags for etcdbench check
USAGE
}

die() {
	echo "run.sh: $*" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--image) [ $# -ge 2 ] || die "--image needs a value"; image=$2; shift 2 ;;
	--host-path) [ $# -ge 2 ] || die "--host-path needs a value"; host_path=$2; shift 2 ;;
	--node) [ $# -ge 2 ] || die "--node needs a value"; nodes+=("$2"); shift 2 ;;
	--out) [ $# -ge 2 ] || die "--out needs a value"; out=$2; shift 2 ;;
	--quick) extra+=(--quick); shift ;;
	--print) print=1; shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; extra+=("$@"); break ;;
	*) usage >&2; die "unknown option $1" ;;
	esac
done
case $host_path in
"" | /*) ;;
*) die "--host-path must be an absolute path, got $host_path" ;;
esac
case $image in
*[[:space:]]*) die "--image must not contain spaces" ;;
esac

# yaml_quote prints $1 as a double-quoted YAML string.
yaml_quote() {
	local s=${1//\\/\\\\}
	s=${s//\"/\\\"}
	printf '"%s"' "$s"
}

extra_lines=""
for a in "${extra[@]+"${extra[@]}"}"; do
	extra_lines+="$(yaml_quote "$a")"$'\n'
done

# render prints job.yaml for node $1 with the options applied and without
# its comments (they name the placeholder it replaces). Values go
# through ENVIRON, not awk -v, so that backslashes reach the YAML unchanged.
render() {
	NODE=$1 IMAGE=$image HOST_PATH=$host_path EXTRA=$extra_lines awk '
		/^ *#/ { next }
		{ gsub(/__NODE__/, ENVIRON["NODE"]) }
		ENVIRON["IMAGE"] != "" && /^ *image: / { sub(/image: .*/, "image: " ENVIRON["IMAGE"]) }
		ENVIRON["HOST_PATH"] != "" && /^ *path: \/var\/lib\/etcd-etcdbench$/ { sub(/path: .*/, "path: " ENVIRON["HOST_PATH"]) }
		{ print }
		/^ *- json$/ && ENVIRON["EXTRA"] != "" {
			indent = $0; sub(/-.*/, "", indent)
			n = split(ENVIRON["EXTRA"], a, "\n")
			for (i = 1; i <= n; i++) if (a[i] != "") print indent "- " a[i]
		}
	' "$here/job.yaml"
}

if [ ${#nodes[@]} -eq 0 ]; then
	[ $print = 0 ] || die "--print needs --node"
	read -r -a nodes <<<"$(kubectl get nodes -l node-role.kubernetes.io/control-plane -o 'jsonpath={.items[*].metadata.name}')"
	[ ${#nodes[@]} -gt 0 ] || die "no node is labelled node-role.kubernetes.io/control-plane; name them with --node"
fi
for node in "${nodes[@]}"; do
	[[ $node =~ ^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$ ]] || die "not a node name: $node"
done

if [ $print = 1 ]; then
	for node in "${nodes[@]}"; do
		echo "---"
		render "$node"
	done
	exit 0
fi

kubectl apply -f "$here/namespace.yaml" >/dev/null
mkdir -p "$out"
worst=0
for node in "${nodes[@]}"; do
	job=$(render "$node" | kubectl create -f - -o name)
	echo "$node: $job running" >&2
	# activeDeadlineSeconds (600) ends every Job; the loop only waits for it.
	while :; do
		# A failed call (an API server hiccup) only means: ask again.
		cond=$(kubectl get -n "$ns" "$job" -o 'jsonpath={.status.conditions[?(@.status=="True")].type}') || cond=""
		case " $cond " in
		*" Complete "* | *" Failed "*) break ;;
		esac
		sleep 5
	done
	code=$(kubectl get -n "$ns" pods -l "job-name=${job#*/}" \
		-o 'jsonpath={.items[0].status.containerStatuses[0].state.terminated.exitCode}' || true)
	kubectl logs -n "$ns" "$job" >"$out/$node.log" 2>&1 || true
	# The result record is the log's JSON object; other lines are stderr.
	sed -n '/^{$/,/^}$/p' "$out/$node.log" >"$out/$node.json"
	[ -s "$out/$node.json" ] || rm -f "$out/$node.json"
	case $code in
	"" | *[!0-9]*) echo "$node: $job ended without an exit code ($cond): kubectl -n $ns describe $job" >&2; code=3 ;;
	*) echo "$node: exit code $code, result in $out/$node.json, log in $out/$node.log" >&2 ;;
	esac
	[ "$code" -le "$worst" ] || worst=$code
done
exit "$worst"
