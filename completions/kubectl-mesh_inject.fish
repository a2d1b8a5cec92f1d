# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kubectl_mesh_inject_global_optspecs
    string join \n f/filename= R/recursive exclude= n/namespace= namespace-from-env= max-input-bytes= o/output= diff in-place overwrite-read-only check q/quiet v/verbose report= color= no-reuse profile= config= set= kube-version= native-sidecar= security-context= context= linkerd-chart= warn-only h/help V/version
end

function __fish_kubectl_mesh_inject_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_kubectl_mesh_inject_global_optspecs) -- $cmd 2>/dev/null
    or return 0 # a value is still to come
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_kubectl_mesh_inject_using_subcommand
    set -l cmd (__fish_kubectl_mesh_inject_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -s f -l filename -d 'File or directory with manifests; `-` reads standard input (repeatable). Without -f, standard input is read when it is not a terminal' -r -F
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -l exclude -d 'Leave out input files matching GLOB (repeatable): without a `/`, matched against each file and directory name (`templates`, `*.tpl.yaml`); with one, against the path (`charts/**`). The syntax is ripgrep\'s and fd\'s: `*`, `?`, `[a-z]`, `[!a]`, `{a,b}`, `**`. A Helm chart\'s templates and kustomize patches are left out without it' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -s n -l namespace -d 'Namespace of objects that name none [default: default, and the report says so for each workload injected there]' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -l namespace-from-env -d 'Without -n, the namespace of objects that name none is the value of the environment variable VAR (Helm 4\'s post-renderer plugin passes HELM_NAMESPACE, the namespace of the release); VAR unset is an error' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -l max-input-bytes -d 'Most bytes one input (a file, or standard input) may hold, in bytes or with a suffix: Ki, Mi, Gi, Ti (powers of 1024) or k, M, G, T (powers of 1000), as `256Mi`. Reading stops there: a larger input stops the run (exit 2) naming it. The --context files too' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -s o -l output -d 'Output format on standard output' -r -f -a "yaml\t'The manifests, edited in place'
json\t'The objects as JSON (a `List` when there are several)'
patch\t'The RFC 6902 JSON Patch of each changed object'"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -l report -d 'Report format on standard error: text, or json (versioned, for tools)' -r -f -a "text\t''
json\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -l color -d 'When to colour the diff, errors, warnings and rejections: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -l profile -d 'Embedded profile: linkerd (default; uninject takes the mesh that injected each file) or istio' -r -f -a "linkerd\t''
istio\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -l config -d 'A profile file of your own (start from `kubectl mesh-inject config`)' -r -F
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -l set -d 'Override a profile value, e.g. --set proxyVersion=edge-26.5.2 (repeatable). Flags win over the workloads\' annotations, which win over the profile' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -l kube-version -d 'Kubernetes version the manifests are for: decides native sidecars (1.29+), the preStop sleep action (1.30+) and PodSecurityPolicy (up to 1.24)' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -l native-sidecar -d 'Run the proxy as a native sidecar: auto (where the version has them), always, never. Overrides the profile and the workloads\' annotations' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -l security-context -d 'Security context of the injected containers: auto (a PodSecurityPolicy in context up to 1.24, else copy), psp, copy (from the first app container), off' -r -f -a "auto\t''
psp\t''
copy\t''
off\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -l context -d 'Files or directories with cluster objects (LimitRange, ResourceQuota, PodSecurityPolicy, Namespace, the mesh\'s ConfigMaps) that apply to the input; objects in the input itself count too (repeatable). Linkerd\'s proxy needs the trust anchors of its trust-roots ConfigMap: without them nothing is injected' -r -F
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -l linkerd-chart -d 'Linkerd\'s control-plane chart of the cluster\'s release, as `helm pull` writes it (a directory or its .tgz): its partials render the proxy, its init container, the debug container and the volumes. A --context directory holding linkerd-control-plane/ or linkerd-control-plane-*.tgz gives it too' -r -F
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -s R -l recursive -d 'Descend into subdirectories of directories given with -f'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -l diff -d 'Show a unified diff of what would change instead of the manifests; exit 1 when there are differences, 0 when none, as `kubectl diff` does'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -l in-place -d 'Rewrite the input files (atomically) instead of printing'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -l overwrite-read-only -d 'With --in-place, rewrite read-only files too (refused otherwise)'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -l check -d 'Write nothing; exit 1 and list the files that would change'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -s q -l quiet -d 'Print no report on standard error'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -s v -l verbose -d 'List every object in the report, also those left as expected (kinds without a pod, workloads already injected); by default the report lists what changed, what was skipped for a reason, warnings and rejections, then the summary'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -l no-reuse -d 'Reuse nothing from one workload to the next: every proxy, filling and block of text made for real. The output is the same, only slower: the reference the tests hold the reuse to, and a way to rule it out (see docs/development.md)'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -l warn-only -d 'Write the output even when the cluster would reject an injected workload because of the injection; the rejections are reported as warnings (one the workload drew before injection too never stops the output)'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -s V -l version -d 'Print version'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -a "inject" -d 'Inject the proxy (what runs when no subcommand is given)'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -a "uninject" -d 'Remove exactly what inject added'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -a "config" -d 'Print the effective profile (with --set values applied), to start your own from'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -a "admit" -d 'Replay the apiserver\'s admission chain for every pod and pod template, with the mutating webhooks in context (and their reinvocation)'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -a "context" -d 'The cluster\'s configuration, saved for --context'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -a "verify" -d 'Prove the output is the cluster\'s own: send each workload the tool injects to the apiserver as a server-side dry run, once as it was before injection (the cluster\'s webhook injects it) and once as the tool injects it, and compare the two pods field by field; exit 1 on any difference'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -a "version" -d 'Print the version and the proxies the embedded profiles inject (what --version prints)'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_needs_command" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -s f -l filename -d 'File or directory with manifests; `-` reads standard input (repeatable). Without -f, standard input is read when it is not a terminal' -r -F
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -l exclude -d 'Leave out input files matching GLOB (repeatable): without a `/`, matched against each file and directory name (`templates`, `*.tpl.yaml`); with one, against the path (`charts/**`). The syntax is ripgrep\'s and fd\'s: `*`, `?`, `[a-z]`, `[!a]`, `{a,b}`, `**`. A Helm chart\'s templates and kustomize patches are left out without it' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -s n -l namespace -d 'Namespace of objects that name none [default: default, and the report says so for each workload injected there]' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -l namespace-from-env -d 'Without -n, the namespace of objects that name none is the value of the environment variable VAR (Helm 4\'s post-renderer plugin passes HELM_NAMESPACE, the namespace of the release); VAR unset is an error' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -l max-input-bytes -d 'Most bytes one input (a file, or standard input) may hold, in bytes or with a suffix: Ki, Mi, Gi, Ti (powers of 1024) or k, M, G, T (powers of 1000), as `256Mi`. Reading stops there: a larger input stops the run (exit 2) naming it. The --context files too' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -s o -l output -d 'Output format on standard output' -r -f -a "yaml\t'The manifests, edited in place'
json\t'The objects as JSON (a `List` when there are several)'
patch\t'The RFC 6902 JSON Patch of each changed object'"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -l report -d 'Report format on standard error: text, or json (versioned, for tools)' -r -f -a "text\t''
json\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -l color -d 'When to colour the diff, errors, warnings and rejections: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -l profile -d 'Embedded profile: linkerd (default; uninject takes the mesh that injected each file) or istio' -r -f -a "linkerd\t''
istio\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -l config -d 'A profile file of your own (start from `kubectl mesh-inject config`)' -r -F
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -l set -d 'Override a profile value, e.g. --set proxyVersion=edge-26.5.2 (repeatable). Flags win over the workloads\' annotations, which win over the profile' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -l kube-version -d 'Kubernetes version the manifests are for: decides native sidecars (1.29+), the preStop sleep action (1.30+) and PodSecurityPolicy (up to 1.24)' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -l native-sidecar -d 'Run the proxy as a native sidecar: auto (where the version has them), always, never. Overrides the profile and the workloads\' annotations' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -l security-context -d 'Security context of the injected containers: auto (a PodSecurityPolicy in context up to 1.24, else copy), psp, copy (from the first app container), off' -r -f -a "auto\t''
psp\t''
copy\t''
off\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -l context -d 'Files or directories with cluster objects (LimitRange, ResourceQuota, PodSecurityPolicy, Namespace, the mesh\'s ConfigMaps) that apply to the input; objects in the input itself count too (repeatable). Linkerd\'s proxy needs the trust anchors of its trust-roots ConfigMap: without them nothing is injected' -r -F
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -l linkerd-chart -d 'Linkerd\'s control-plane chart of the cluster\'s release, as `helm pull` writes it (a directory or its .tgz): its partials render the proxy, its init container, the debug container and the volumes. A --context directory holding linkerd-control-plane/ or linkerd-control-plane-*.tgz gives it too' -r -F
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -s R -l recursive -d 'Descend into subdirectories of directories given with -f'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -l diff -d 'Show a unified diff of what would change instead of the manifests; exit 1 when there are differences, 0 when none, as `kubectl diff` does'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -l in-place -d 'Rewrite the input files (atomically) instead of printing'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -l overwrite-read-only -d 'With --in-place, rewrite read-only files too (refused otherwise)'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -l check -d 'Write nothing; exit 1 and list the files that would change'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -s q -l quiet -d 'Print no report on standard error'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -s v -l verbose -d 'List every object in the report, also those left as expected (kinds without a pod, workloads already injected); by default the report lists what changed, what was skipped for a reason, warnings and rejections, then the summary'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -l no-reuse -d 'Reuse nothing from one workload to the next: every proxy, filling and block of text made for real. The output is the same, only slower: the reference the tests hold the reuse to, and a way to rule it out (see docs/development.md)'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -l warn-only -d 'Write the output even when the cluster would reject an injected workload because of the injection; the rejections are reported as warnings (one the workload drew before injection too never stops the output)'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand inject" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand uninject" -s f -l filename -d 'File or directory with manifests; `-` reads standard input (repeatable). Without -f, standard input is read when it is not a terminal' -r -F
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand uninject" -l exclude -d 'Leave out input files matching GLOB (repeatable): without a `/`, matched against each file and directory name (`templates`, `*.tpl.yaml`); with one, against the path (`charts/**`). The syntax is ripgrep\'s and fd\'s: `*`, `?`, `[a-z]`, `[!a]`, `{a,b}`, `**`. A Helm chart\'s templates and kustomize patches are left out without it' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand uninject" -s n -l namespace -d 'Namespace of objects that name none [default: default, and the report says so for each workload injected there]' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand uninject" -l namespace-from-env -d 'Without -n, the namespace of objects that name none is the value of the environment variable VAR (Helm 4\'s post-renderer plugin passes HELM_NAMESPACE, the namespace of the release); VAR unset is an error' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand uninject" -l max-input-bytes -d 'Most bytes one input (a file, or standard input) may hold, in bytes or with a suffix: Ki, Mi, Gi, Ti (powers of 1024) or k, M, G, T (powers of 1000), as `256Mi`. Reading stops there: a larger input stops the run (exit 2) naming it. The --context files too' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand uninject" -s o -l output -d 'Output format on standard output' -r -f -a "yaml\t'The manifests, edited in place'
json\t'The objects as JSON (a `List` when there are several)'
patch\t'The RFC 6902 JSON Patch of each changed object'"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand uninject" -l report -d 'Report format on standard error: text, or json (versioned, for tools)' -r -f -a "text\t''
json\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand uninject" -l color -d 'When to colour the diff, errors, warnings and rejections: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand uninject" -l profile -d 'Embedded profile: linkerd (default; uninject takes the mesh that injected each file) or istio' -r -f -a "linkerd\t''
istio\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand uninject" -l config -d 'A profile file of your own (start from `kubectl mesh-inject config`)' -r -F
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand uninject" -l set -d 'Override a profile value, e.g. --set proxyVersion=edge-26.5.2 (repeatable). Flags win over the workloads\' annotations, which win over the profile' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand uninject" -s R -l recursive -d 'Descend into subdirectories of directories given with -f'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand uninject" -l diff -d 'Show a unified diff of what would change instead of the manifests; exit 1 when there are differences, 0 when none, as `kubectl diff` does'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand uninject" -l in-place -d 'Rewrite the input files (atomically) instead of printing'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand uninject" -l overwrite-read-only -d 'With --in-place, rewrite read-only files too (refused otherwise)'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand uninject" -l check -d 'Write nothing; exit 1 and list the files that would change'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand uninject" -s q -l quiet -d 'Print no report on standard error'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand uninject" -s v -l verbose -d 'List every object in the report, also those left as expected (kinds without a pod, workloads already injected); by default the report lists what changed, what was skipped for a reason, warnings and rejections, then the summary'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand uninject" -l no-reuse -d 'Reuse nothing from one workload to the next: every proxy, filling and block of text made for real. The output is the same, only slower: the reference the tests hold the reuse to, and a way to rule it out (see docs/development.md)'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand uninject" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand config" -l profile -d 'Embedded profile: linkerd (default; uninject takes the mesh that injected each file) or istio' -r -f -a "linkerd\t''
istio\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand config" -l config -d 'A profile file of your own (start from `kubectl mesh-inject config`)' -r -F
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand config" -l set -d 'Override a profile value, e.g. --set proxyVersion=edge-26.5.2 (repeatable). Flags win over the workloads\' annotations, which win over the profile' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand config" -s h -l help -d 'Print help'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand admit" -s f -l filename -d 'File or directory with manifests; `-` reads standard input (repeatable). Without -f, standard input is read when it is not a terminal' -r -F
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand admit" -l exclude -d 'Leave out input files matching GLOB (repeatable): without a `/`, matched against each file and directory name (`templates`, `*.tpl.yaml`); with one, against the path (`charts/**`). The syntax is ripgrep\'s and fd\'s: `*`, `?`, `[a-z]`, `[!a]`, `{a,b}`, `**`. A Helm chart\'s templates and kustomize patches are left out without it' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand admit" -s n -l namespace -d 'Namespace of objects that name none [default: default, and the report says so for each workload injected there]' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand admit" -l namespace-from-env -d 'Without -n, the namespace of objects that name none is the value of the environment variable VAR (Helm 4\'s post-renderer plugin passes HELM_NAMESPACE, the namespace of the release); VAR unset is an error' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand admit" -l max-input-bytes -d 'Most bytes one input (a file, or standard input) may hold, in bytes or with a suffix: Ki, Mi, Gi, Ti (powers of 1024) or k, M, G, T (powers of 1000), as `256Mi`. Reading stops there: a larger input stops the run (exit 2) naming it. The --context files too' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand admit" -l context -d 'Files or directories with cluster objects: LimitRange, ResourceQuota, PodSecurityPolicy, Namespace, MutatingWebhookConfiguration, WebhookEmulation and the mesh\'s ConfigMaps, Linkerd\'s trust anchors among them, which its injector needs (repeatable); objects in the input count too' -r -F
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand admit" -l linkerd-chart -d 'Linkerd\'s control-plane chart of the cluster\'s release, as `helm pull` writes it (a directory or its .tgz): its partials render what Linkerd\'s webhook injects. A --context directory holding linkerd-control-plane/ or linkerd-control-plane-*.tgz gives it too' -r -F
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand admit" -l kube-version -d 'Kubernetes version of the apiserver to replay' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand admit" -s o -l output -d 'Output on standard output: text (a verdict line per object), or the pods as they would be stored, as yaml or json' -r -f -a "text\t''
yaml\t''
json\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand admit" -l native-sidecar -d 'Native sidecars for the mesh\'s injector: auto, always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand admit" -l report -d 'Report format on standard error: text, or json (versioned, for tools)' -r -f -a "text\t''
json\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand admit" -l color -d 'When to colour the diff, errors, warnings and rejections: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand admit" -l profile -d 'Embedded profile: linkerd (default; uninject takes the mesh that injected each file) or istio' -r -f -a "linkerd\t''
istio\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand admit" -l config -d 'A profile file of your own (start from `kubectl mesh-inject config`)' -r -F
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand admit" -l set -d 'Override a profile value, e.g. --set proxyVersion=edge-26.5.2 (repeatable). Flags win over the workloads\' annotations, which win over the profile' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand admit" -s R -l recursive -d 'Descend into subdirectories of directories given with -f'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand admit" -l trace -d 'Print every step: pass, plugin or webhook, whether it mutated, its patch'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand admit" -l compare -d 'Run both paths for each workload: the webhook path (the input as it is) and the static path (injected by this tool first), and show where they differ'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand admit" -s q -l quiet -d 'Print no report on standard error'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand admit" -s v -l verbose -d 'List every object in the report, also those left as expected (kinds without a pod, workloads already injected); by default the report lists what changed, what was skipped for a reason, warnings and rejections, then the summary'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand admit" -s h -l help -d 'Print help'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand context; and not __fish_seen_subcommand_from save help" -s h -l help -d 'Print help'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand context; and not __fish_seen_subcommand_from save help" -f -a "save" -d 'Read, through kubectl, every object of the cluster this tool reads (the mesh\'s ConfigMaps, Namespaces, LimitRanges, ResourceQuotas, PodSecurityPolicies, MutatingWebhookConfigurations) and write them into DIR, one file per kind and namespace, for --context DIR. Secrets are never read'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand context; and not __fish_seen_subcommand_from save help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand context; and __fish_seen_subcommand_from save" -l profile -d 'Mesh whose ConfigMaps to save: linkerd or istio [default: both, each one the cluster has]' -r -f -a "linkerd\t''
istio\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand context; and __fish_seen_subcommand_from save" -l linkerd-namespace -d 'Namespace of Linkerd\'s control plane [default: the linkerd profile\'s controlPlaneNamespace, linkerd]' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand context; and __fish_seen_subcommand_from save" -l istio-namespace -d 'Namespace of Istio\'s control plane [default: the istio profile\'s istioNamespace, istio-system]' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand context; and __fish_seen_subcommand_from save" -l kubeconfig -d 'kubeconfig file kubectl reads (kubectl\'s --kubeconfig)' -r -F
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand context; and __fish_seen_subcommand_from save" -l kube-context -d 'kubeconfig context kubectl uses (kubectl\'s --context: this tool\'s --context names a saved context)' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand context; and __fish_seen_subcommand_from save" -s h -l help -d 'Print help'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand context; and __fish_seen_subcommand_from help" -f -a "save" -d 'Read, through kubectl, every object of the cluster this tool reads (the mesh\'s ConfigMaps, Namespaces, LimitRanges, ResourceQuotas, PodSecurityPolicies, MutatingWebhookConfigurations) and write them into DIR, one file per kind and namespace, for --context DIR. Secrets are never read'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand context; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand verify" -s f -l filename -d 'File or directory with manifests; `-` reads standard input (repeatable). Without -f, standard input is read when it is not a terminal' -r -F
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand verify" -l exclude -d 'Leave out input files matching GLOB (repeatable): without a `/`, matched against each file and directory name (`templates`, `*.tpl.yaml`); with one, against the path (`charts/**`). The syntax is ripgrep\'s and fd\'s: `*`, `?`, `[a-z]`, `[!a]`, `{a,b}`, `**`. A Helm chart\'s templates and kustomize patches are left out without it' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand verify" -s n -l namespace -d 'Namespace of objects that name none [default: default, and the report says so for each workload injected there]' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand verify" -l namespace-from-env -d 'Without -n, the namespace of objects that name none is the value of the environment variable VAR (Helm 4\'s post-renderer plugin passes HELM_NAMESPACE, the namespace of the release); VAR unset is an error' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand verify" -l max-input-bytes -d 'Most bytes one input (a file, or standard input) may hold, in bytes or with a suffix: Ki, Mi, Gi, Ti (powers of 1024) or k, M, G, T (powers of 1000), as `256Mi`. Reading stops there: a larger input stops the run (exit 2) naming it. The --context files too' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand verify" -l profile -d 'Embedded profile: linkerd (default; uninject takes the mesh that injected each file) or istio' -r -f -a "linkerd\t''
istio\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand verify" -l config -d 'A profile file of your own (start from `kubectl mesh-inject config`)' -r -F
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand verify" -l set -d 'Override a profile value, e.g. --set proxyVersion=edge-26.5.2 (repeatable). Flags win over the workloads\' annotations, which win over the profile' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand verify" -l kube-version -d 'Kubernetes version the manifests are for: decides native sidecars (1.29+), the preStop sleep action (1.30+) and PodSecurityPolicy (up to 1.24)' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand verify" -l native-sidecar -d 'Run the proxy as a native sidecar: auto (where the version has them), always, never. Overrides the profile and the workloads\' annotations' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand verify" -l security-context -d 'Security context of the injected containers: auto (a PodSecurityPolicy in context up to 1.24, else copy), psp, copy (from the first app container), off' -r -f -a "auto\t''
psp\t''
copy\t''
off\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand verify" -l context -d 'Files or directories with cluster objects (LimitRange, ResourceQuota, PodSecurityPolicy, Namespace, the mesh\'s ConfigMaps) that apply to the input; objects in the input itself count too (repeatable). Linkerd\'s proxy needs the trust anchors of its trust-roots ConfigMap: without them nothing is injected' -r -F
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand verify" -l linkerd-chart -d 'Linkerd\'s control-plane chart of the cluster\'s release, as `helm pull` writes it (a directory or its .tgz): its partials render the proxy, its init container, the debug container and the volumes. A --context directory holding linkerd-control-plane/ or linkerd-control-plane-*.tgz gives it too' -r -F
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand verify" -l kubeconfig -d 'kubeconfig file kubectl reads (kubectl\'s --kubeconfig)' -r -F
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand verify" -l kube-context -d 'kubeconfig context kubectl uses (kubectl\'s --context: this tool\'s --context names a saved context)' -r
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand verify" -l color -d 'When to colour the verdicts: auto (on a terminal, unless NO_COLOR is set), always, never' -r -f -a "auto\t''
always\t''
never\t''"
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand verify" -s R -l recursive -d 'Descend into subdirectories of directories given with -f'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand verify" -l warn-only -d 'Write the output even when the cluster would reject an injected workload because of the injection; the rejections are reported as warnings (one the workload drew before injection too never stops the output)'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand verify" -s v -l verbose -d 'Also list the workloads the tool leaves as they are (not sent)'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand verify" -s h -l help -d 'Print help'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand version" -s h -l help -d 'Print help'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand help; and not __fish_seen_subcommand_from inject uninject config admit context verify version help" -f -a "inject" -d 'Inject the proxy (what runs when no subcommand is given)'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand help; and not __fish_seen_subcommand_from inject uninject config admit context verify version help" -f -a "uninject" -d 'Remove exactly what inject added'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand help; and not __fish_seen_subcommand_from inject uninject config admit context verify version help" -f -a "config" -d 'Print the effective profile (with --set values applied), to start your own from'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand help; and not __fish_seen_subcommand_from inject uninject config admit context verify version help" -f -a "admit" -d 'Replay the apiserver\'s admission chain for every pod and pod template, with the mutating webhooks in context (and their reinvocation)'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand help; and not __fish_seen_subcommand_from inject uninject config admit context verify version help" -f -a "context" -d 'The cluster\'s configuration, saved for --context'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand help; and not __fish_seen_subcommand_from inject uninject config admit context verify version help" -f -a "verify" -d 'Prove the output is the cluster\'s own: send each workload the tool injects to the apiserver as a server-side dry run, once as it was before injection (the cluster\'s webhook injects it) and once as the tool injects it, and compare the two pods field by field; exit 1 on any difference'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand help; and not __fish_seen_subcommand_from inject uninject config admit context verify version help" -f -a "version" -d 'Print the version and the proxies the embedded profiles inject (what --version prints)'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand help; and not __fish_seen_subcommand_from inject uninject config admit context verify version help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kubectl-mesh_inject -n "__fish_kubectl_mesh_inject_using_subcommand help; and __fish_seen_subcommand_from context" -f -a "save" -d 'Read, through kubectl, every object of the cluster this tool reads (the mesh\'s ConfigMaps, Namespaces, LimitRanges, ResourceQuotas, PodSecurityPolicies, MutatingWebhookConfigurations) and write them into DIR, one file per kind and namespace, for --context DIR. Secrets are never read'
