
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'kubectl-mesh_inject' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'kubectl-mesh_inject'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'kubectl-mesh_inject' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'File or directory with manifests; `-` reads standard input (repeatable). Without -f, standard input is read when it is not a terminal')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'File or directory with manifests; `-` reads standard input (repeatable). Without -f, standard input is read when it is not a terminal')
            [CompletionResult]::new('--exclude', '--exclude', [CompletionResultType]::ParameterName, 'Leave out input files matching GLOB (repeatable): without a `/`, matched against each file and directory name (`templates`, `*.tpl.yaml`); with one, against the path (`charts/**`). The syntax is ripgrep''s and fd''s: `*`, `?`, `[a-z]`, `[!a]`, `{a,b}`, `**`. A Helm chart''s templates and kustomize patches are left out without it')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace of objects that name none [default: default, and the report says so for each workload injected there]')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace of objects that name none [default: default, and the report says so for each workload injected there]')
            [CompletionResult]::new('--namespace-from-env', '--namespace-from-env', [CompletionResultType]::ParameterName, 'Without -n, the namespace of objects that name none is the value of the environment variable VAR (Helm 4''s post-renderer plugin passes HELM_NAMESPACE, the namespace of the release); VAR unset is an error')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Most bytes one input (a file, or standard input) may hold, in bytes or with a suffix: Ki, Mi, Gi, Ti (powers of 1024) or k, M, G, T (powers of 1000), as `256Mi`. Reading stops there: a larger input stops the run (exit 2) naming it. The --context files too')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format on standard output')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format on standard output')
            [CompletionResult]::new('--report', '--report', [CompletionResultType]::ParameterName, 'Report format on standard error: text, or json (versioned, for tools)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the diff, errors, warnings and rejections: auto (on a terminal, unless NO_COLOR is set), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Embedded profile: linkerd (default; uninject takes the mesh that injected each file) or istio')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'A profile file of your own (start from `kubectl mesh-inject config`)')
            [CompletionResult]::new('--set', '--set', [CompletionResultType]::ParameterName, 'Override a profile value, e.g. --set proxyVersion=edge-26.5.2 (repeatable). Flags win over the workloads'' annotations, which win over the profile')
            [CompletionResult]::new('--kube-version', '--kube-version', [CompletionResultType]::ParameterName, 'Kubernetes version the manifests are for: decides native sidecars (1.29+), the preStop sleep action (1.30+) and PodSecurityPolicy (up to 1.24)')
            [CompletionResult]::new('--native-sidecar', '--native-sidecar', [CompletionResultType]::ParameterName, 'Run the proxy as a native sidecar: auto (where the version has them), always, never. Overrides the profile and the workloads'' annotations')
            [CompletionResult]::new('--security-context', '--security-context', [CompletionResultType]::ParameterName, 'Security context of the injected containers: auto (a PodSecurityPolicy in context up to 1.24, else copy), psp, copy (from the first app container), off')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'Files or directories with cluster objects (LimitRange, ResourceQuota, PodSecurityPolicy, Namespace, the mesh''s ConfigMaps) that apply to the input; objects in the input itself count too (repeatable). Linkerd''s proxy needs the trust anchors of its trust-roots ConfigMap: without them nothing is injected')
            [CompletionResult]::new('--linkerd-chart', '--linkerd-chart', [CompletionResultType]::ParameterName, 'Linkerd''s control-plane chart of the cluster''s release, as `helm pull` writes it (a directory or its .tgz): its partials render the proxy, its init container, the debug container and the volumes. A --context directory holding linkerd-control-plane/ or linkerd-control-plane-*.tgz gives it too')
            [CompletionResult]::new('-R', '-R ', [CompletionResultType]::ParameterName, 'Descend into subdirectories of directories given with -f')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'Descend into subdirectories of directories given with -f')
            [CompletionResult]::new('--diff', '--diff', [CompletionResultType]::ParameterName, 'Show a unified diff of what would change instead of the manifests; exit 1 when there are differences, 0 when none, as `kubectl diff` does')
            [CompletionResult]::new('--in-place', '--in-place', [CompletionResultType]::ParameterName, 'Rewrite the input files (atomically) instead of printing')
            [CompletionResult]::new('--overwrite-read-only', '--overwrite-read-only', [CompletionResultType]::ParameterName, 'With --in-place, rewrite read-only files too (refused otherwise)')
            [CompletionResult]::new('--check', '--check', [CompletionResultType]::ParameterName, 'Write nothing; exit 1 and list the files that would change')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no report on standard error')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no report on standard error')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'List every object in the report, also those left as expected (kinds without a pod, workloads already injected); by default the report lists what changed, what was skipped for a reason, warnings and rejections, then the summary')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'List every object in the report, also those left as expected (kinds without a pod, workloads already injected); by default the report lists what changed, what was skipped for a reason, warnings and rejections, then the summary')
            [CompletionResult]::new('--no-reuse', '--no-reuse', [CompletionResultType]::ParameterName, 'Reuse nothing from one workload to the next: every proxy, filling and block of text made for real. The output is the same, only slower: the reference the tests hold the reuse to, and a way to rule it out (see docs/development.md)')
            [CompletionResult]::new('--warn-only', '--warn-only', [CompletionResultType]::ParameterName, 'Write the output even when the cluster would reject an injected workload because of the injection; the rejections are reported as warnings (one the workload drew before injection too never stops the output)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('inject', 'inject', [CompletionResultType]::ParameterValue, 'Inject the proxy (what runs when no subcommand is given)')
            [CompletionResult]::new('uninject', 'uninject', [CompletionResultType]::ParameterValue, 'Remove exactly what inject added')
            [CompletionResult]::new('config', 'config', [CompletionResultType]::ParameterValue, 'Print the effective profile (with --set values applied), to start your own from')
            [CompletionResult]::new('admit', 'admit', [CompletionResultType]::ParameterValue, 'Replay the apiserver''s admission chain for every pod and pod template, with the mutating webhooks in context (and their reinvocation)')
            [CompletionResult]::new('context', 'context', [CompletionResultType]::ParameterValue, 'The cluster''s configuration, saved for --context')
            [CompletionResult]::new('verify', 'verify', [CompletionResultType]::ParameterValue, 'Prove the output is the cluster''s own: send each workload the tool injects to the apiserver as a server-side dry run, once as it was before injection (the cluster''s webhook injects it) and once as the tool injects it, and compare the two pods field by field; exit 1 on any difference')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print the version and the proxies the embedded profiles inject (what --version prints)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-mesh_inject;inject' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'File or directory with manifests; `-` reads standard input (repeatable). Without -f, standard input is read when it is not a terminal')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'File or directory with manifests; `-` reads standard input (repeatable). Without -f, standard input is read when it is not a terminal')
            [CompletionResult]::new('--exclude', '--exclude', [CompletionResultType]::ParameterName, 'Leave out input files matching GLOB (repeatable): without a `/`, matched against each file and directory name (`templates`, `*.tpl.yaml`); with one, against the path (`charts/**`). The syntax is ripgrep''s and fd''s: `*`, `?`, `[a-z]`, `[!a]`, `{a,b}`, `**`. A Helm chart''s templates and kustomize patches are left out without it')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace of objects that name none [default: default, and the report says so for each workload injected there]')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace of objects that name none [default: default, and the report says so for each workload injected there]')
            [CompletionResult]::new('--namespace-from-env', '--namespace-from-env', [CompletionResultType]::ParameterName, 'Without -n, the namespace of objects that name none is the value of the environment variable VAR (Helm 4''s post-renderer plugin passes HELM_NAMESPACE, the namespace of the release); VAR unset is an error')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Most bytes one input (a file, or standard input) may hold, in bytes or with a suffix: Ki, Mi, Gi, Ti (powers of 1024) or k, M, G, T (powers of 1000), as `256Mi`. Reading stops there: a larger input stops the run (exit 2) naming it. The --context files too')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format on standard output')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format on standard output')
            [CompletionResult]::new('--report', '--report', [CompletionResultType]::ParameterName, 'Report format on standard error: text, or json (versioned, for tools)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the diff, errors, warnings and rejections: auto (on a terminal, unless NO_COLOR is set), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Embedded profile: linkerd (default; uninject takes the mesh that injected each file) or istio')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'A profile file of your own (start from `kubectl mesh-inject config`)')
            [CompletionResult]::new('--set', '--set', [CompletionResultType]::ParameterName, 'Override a profile value, e.g. --set proxyVersion=edge-26.5.2 (repeatable). Flags win over the workloads'' annotations, which win over the profile')
            [CompletionResult]::new('--kube-version', '--kube-version', [CompletionResultType]::ParameterName, 'Kubernetes version the manifests are for: decides native sidecars (1.29+), the preStop sleep action (1.30+) and PodSecurityPolicy (up to 1.24)')
            [CompletionResult]::new('--native-sidecar', '--native-sidecar', [CompletionResultType]::ParameterName, 'Run the proxy as a native sidecar: auto (where the version has them), always, never. Overrides the profile and the workloads'' annotations')
            [CompletionResult]::new('--security-context', '--security-context', [CompletionResultType]::ParameterName, 'Security context of the injected containers: auto (a PodSecurityPolicy in context up to 1.24, else copy), psp, copy (from the first app container), off')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'Files or directories with cluster objects (LimitRange, ResourceQuota, PodSecurityPolicy, Namespace, the mesh''s ConfigMaps) that apply to the input; objects in the input itself count too (repeatable). Linkerd''s proxy needs the trust anchors of its trust-roots ConfigMap: without them nothing is injected')
            [CompletionResult]::new('--linkerd-chart', '--linkerd-chart', [CompletionResultType]::ParameterName, 'Linkerd''s control-plane chart of the cluster''s release, as `helm pull` writes it (a directory or its .tgz): its partials render the proxy, its init container, the debug container and the volumes. A --context directory holding linkerd-control-plane/ or linkerd-control-plane-*.tgz gives it too')
            [CompletionResult]::new('-R', '-R ', [CompletionResultType]::ParameterName, 'Descend into subdirectories of directories given with -f')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'Descend into subdirectories of directories given with -f')
            [CompletionResult]::new('--diff', '--diff', [CompletionResultType]::ParameterName, 'Show a unified diff of what would change instead of the manifests; exit 1 when there are differences, 0 when none, as `kubectl diff` does')
            [CompletionResult]::new('--in-place', '--in-place', [CompletionResultType]::ParameterName, 'Rewrite the input files (atomically) instead of printing')
            [CompletionResult]::new('--overwrite-read-only', '--overwrite-read-only', [CompletionResultType]::ParameterName, 'With --in-place, rewrite read-only files too (refused otherwise)')
            [CompletionResult]::new('--check', '--check', [CompletionResultType]::ParameterName, 'Write nothing; exit 1 and list the files that would change')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no report on standard error')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no report on standard error')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'List every object in the report, also those left as expected (kinds without a pod, workloads already injected); by default the report lists what changed, what was skipped for a reason, warnings and rejections, then the summary')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'List every object in the report, also those left as expected (kinds without a pod, workloads already injected); by default the report lists what changed, what was skipped for a reason, warnings and rejections, then the summary')
            [CompletionResult]::new('--no-reuse', '--no-reuse', [CompletionResultType]::ParameterName, 'Reuse nothing from one workload to the next: every proxy, filling and block of text made for real. The output is the same, only slower: the reference the tests hold the reuse to, and a way to rule it out (see docs/development.md)')
            [CompletionResult]::new('--warn-only', '--warn-only', [CompletionResultType]::ParameterName, 'Write the output even when the cluster would reject an injected workload because of the injection; the rejections are reported as warnings (one the workload drew before injection too never stops the output)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-mesh_inject;uninject' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'File or directory with manifests; `-` reads standard input (repeatable). Without -f, standard input is read when it is not a terminal')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'File or directory with manifests; `-` reads standard input (repeatable). Without -f, standard input is read when it is not a terminal')
            [CompletionResult]::new('--exclude', '--exclude', [CompletionResultType]::ParameterName, 'Leave out input files matching GLOB (repeatable): without a `/`, matched against each file and directory name (`templates`, `*.tpl.yaml`); with one, against the path (`charts/**`). The syntax is ripgrep''s and fd''s: `*`, `?`, `[a-z]`, `[!a]`, `{a,b}`, `**`. A Helm chart''s templates and kustomize patches are left out without it')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace of objects that name none [default: default, and the report says so for each workload injected there]')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace of objects that name none [default: default, and the report says so for each workload injected there]')
            [CompletionResult]::new('--namespace-from-env', '--namespace-from-env', [CompletionResultType]::ParameterName, 'Without -n, the namespace of objects that name none is the value of the environment variable VAR (Helm 4''s post-renderer plugin passes HELM_NAMESPACE, the namespace of the release); VAR unset is an error')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Most bytes one input (a file, or standard input) may hold, in bytes or with a suffix: Ki, Mi, Gi, Ti (powers of 1024) or k, M, G, T (powers of 1000), as `256Mi`. Reading stops there: a larger input stops the run (exit 2) naming it. The --context files too')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output format on standard output')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output format on standard output')
            [CompletionResult]::new('--report', '--report', [CompletionResultType]::ParameterName, 'Report format on standard error: text, or json (versioned, for tools)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the diff, errors, warnings and rejections: auto (on a terminal, unless NO_COLOR is set), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Embedded profile: linkerd (default; uninject takes the mesh that injected each file) or istio')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'A profile file of your own (start from `kubectl mesh-inject config`)')
            [CompletionResult]::new('--set', '--set', [CompletionResultType]::ParameterName, 'Override a profile value, e.g. --set proxyVersion=edge-26.5.2 (repeatable). Flags win over the workloads'' annotations, which win over the profile')
            [CompletionResult]::new('-R', '-R ', [CompletionResultType]::ParameterName, 'Descend into subdirectories of directories given with -f')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'Descend into subdirectories of directories given with -f')
            [CompletionResult]::new('--diff', '--diff', [CompletionResultType]::ParameterName, 'Show a unified diff of what would change instead of the manifests; exit 1 when there are differences, 0 when none, as `kubectl diff` does')
            [CompletionResult]::new('--in-place', '--in-place', [CompletionResultType]::ParameterName, 'Rewrite the input files (atomically) instead of printing')
            [CompletionResult]::new('--overwrite-read-only', '--overwrite-read-only', [CompletionResultType]::ParameterName, 'With --in-place, rewrite read-only files too (refused otherwise)')
            [CompletionResult]::new('--check', '--check', [CompletionResultType]::ParameterName, 'Write nothing; exit 1 and list the files that would change')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no report on standard error')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no report on standard error')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'List every object in the report, also those left as expected (kinds without a pod, workloads already injected); by default the report lists what changed, what was skipped for a reason, warnings and rejections, then the summary')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'List every object in the report, also those left as expected (kinds without a pod, workloads already injected); by default the report lists what changed, what was skipped for a reason, warnings and rejections, then the summary')
            [CompletionResult]::new('--no-reuse', '--no-reuse', [CompletionResultType]::ParameterName, 'Reuse nothing from one workload to the next: every proxy, filling and block of text made for real. The output is the same, only slower: the reference the tests hold the reuse to, and a way to rule it out (see docs/development.md)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'kubectl-mesh_inject;config' {
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Embedded profile: linkerd (default; uninject takes the mesh that injected each file) or istio')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'A profile file of your own (start from `kubectl mesh-inject config`)')
            [CompletionResult]::new('--set', '--set', [CompletionResultType]::ParameterName, 'Override a profile value, e.g. --set proxyVersion=edge-26.5.2 (repeatable). Flags win over the workloads'' annotations, which win over the profile')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'kubectl-mesh_inject;admit' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'File or directory with manifests; `-` reads standard input (repeatable). Without -f, standard input is read when it is not a terminal')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'File or directory with manifests; `-` reads standard input (repeatable). Without -f, standard input is read when it is not a terminal')
            [CompletionResult]::new('--exclude', '--exclude', [CompletionResultType]::ParameterName, 'Leave out input files matching GLOB (repeatable): without a `/`, matched against each file and directory name (`templates`, `*.tpl.yaml`); with one, against the path (`charts/**`). The syntax is ripgrep''s and fd''s: `*`, `?`, `[a-z]`, `[!a]`, `{a,b}`, `**`. A Helm chart''s templates and kustomize patches are left out without it')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace of objects that name none [default: default, and the report says so for each workload injected there]')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace of objects that name none [default: default, and the report says so for each workload injected there]')
            [CompletionResult]::new('--namespace-from-env', '--namespace-from-env', [CompletionResultType]::ParameterName, 'Without -n, the namespace of objects that name none is the value of the environment variable VAR (Helm 4''s post-renderer plugin passes HELM_NAMESPACE, the namespace of the release); VAR unset is an error')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Most bytes one input (a file, or standard input) may hold, in bytes or with a suffix: Ki, Mi, Gi, Ti (powers of 1024) or k, M, G, T (powers of 1000), as `256Mi`. Reading stops there: a larger input stops the run (exit 2) naming it. The --context files too')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'Files or directories with cluster objects: LimitRange, ResourceQuota, PodSecurityPolicy, Namespace, MutatingWebhookConfiguration, WebhookEmulation and the mesh''s ConfigMaps, Linkerd''s trust anchors among them, which its injector needs (repeatable); objects in the input count too')
            [CompletionResult]::new('--linkerd-chart', '--linkerd-chart', [CompletionResultType]::ParameterName, 'Linkerd''s control-plane chart of the cluster''s release, as `helm pull` writes it (a directory or its .tgz): its partials render what Linkerd''s webhook injects. A --context directory holding linkerd-control-plane/ or linkerd-control-plane-*.tgz gives it too')
            [CompletionResult]::new('--kube-version', '--kube-version', [CompletionResultType]::ParameterName, 'Kubernetes version of the apiserver to replay')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output on standard output: text (a verdict line per object), or the pods as they would be stored, as yaml or json')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output on standard output: text (a verdict line per object), or the pods as they would be stored, as yaml or json')
            [CompletionResult]::new('--native-sidecar', '--native-sidecar', [CompletionResultType]::ParameterName, 'Native sidecars for the mesh''s injector: auto, always, never')
            [CompletionResult]::new('--report', '--report', [CompletionResultType]::ParameterName, 'Report format on standard error: text, or json (versioned, for tools)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the diff, errors, warnings and rejections: auto (on a terminal, unless NO_COLOR is set), always, never')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Embedded profile: linkerd (default; uninject takes the mesh that injected each file) or istio')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'A profile file of your own (start from `kubectl mesh-inject config`)')
            [CompletionResult]::new('--set', '--set', [CompletionResultType]::ParameterName, 'Override a profile value, e.g. --set proxyVersion=edge-26.5.2 (repeatable). Flags win over the workloads'' annotations, which win over the profile')
            [CompletionResult]::new('-R', '-R ', [CompletionResultType]::ParameterName, 'Descend into subdirectories of directories given with -f')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'Descend into subdirectories of directories given with -f')
            [CompletionResult]::new('--trace', '--trace', [CompletionResultType]::ParameterName, 'Print every step: pass, plugin or webhook, whether it mutated, its patch')
            [CompletionResult]::new('--compare', '--compare', [CompletionResultType]::ParameterName, 'Run both paths for each workload: the webhook path (the input as it is) and the static path (injected by this tool first), and show where they differ')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no report on standard error')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no report on standard error')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'List every object in the report, also those left as expected (kinds without a pod, workloads already injected); by default the report lists what changed, what was skipped for a reason, warnings and rejections, then the summary')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'List every object in the report, also those left as expected (kinds without a pod, workloads already injected); by default the report lists what changed, what was skipped for a reason, warnings and rejections, then the summary')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'kubectl-mesh_inject;context' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('save', 'save', [CompletionResultType]::ParameterValue, 'Read, through kubectl, every object of the cluster this tool reads (the mesh''s ConfigMaps, Namespaces, LimitRanges, ResourceQuotas, PodSecurityPolicies, MutatingWebhookConfigurations) and write them into DIR, one file per kind and namespace, for --context DIR. Secrets are never read')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-mesh_inject;context;save' {
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Mesh whose ConfigMaps to save: linkerd or istio [default: both, each one the cluster has]')
            [CompletionResult]::new('--linkerd-namespace', '--linkerd-namespace', [CompletionResultType]::ParameterName, 'Namespace of Linkerd''s control plane [default: the linkerd profile''s controlPlaneNamespace, linkerd]')
            [CompletionResult]::new('--istio-namespace', '--istio-namespace', [CompletionResultType]::ParameterName, 'Namespace of Istio''s control plane [default: the istio profile''s istioNamespace, istio-system]')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'kubeconfig file kubectl reads (kubectl''s --kubeconfig)')
            [CompletionResult]::new('--kube-context', '--kube-context', [CompletionResultType]::ParameterName, 'kubeconfig context kubectl uses (kubectl''s --context: this tool''s --context names a saved context)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'kubectl-mesh_inject;context;help' {
            [CompletionResult]::new('save', 'save', [CompletionResultType]::ParameterValue, 'Read, through kubectl, every object of the cluster this tool reads (the mesh''s ConfigMaps, Namespaces, LimitRanges, ResourceQuotas, PodSecurityPolicies, MutatingWebhookConfigurations) and write them into DIR, one file per kind and namespace, for --context DIR. Secrets are never read')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-mesh_inject;context;help;save' {
            break
        }
        'kubectl-mesh_inject;context;help;help' {
            break
        }
        'kubectl-mesh_inject;verify' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'File or directory with manifests; `-` reads standard input (repeatable). Without -f, standard input is read when it is not a terminal')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'File or directory with manifests; `-` reads standard input (repeatable). Without -f, standard input is read when it is not a terminal')
            [CompletionResult]::new('--exclude', '--exclude', [CompletionResultType]::ParameterName, 'Leave out input files matching GLOB (repeatable): without a `/`, matched against each file and directory name (`templates`, `*.tpl.yaml`); with one, against the path (`charts/**`). The syntax is ripgrep''s and fd''s: `*`, `?`, `[a-z]`, `[!a]`, `{a,b}`, `**`. A Helm chart''s templates and kustomize patches are left out without it')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace of objects that name none [default: default, and the report says so for each workload injected there]')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace of objects that name none [default: default, and the report says so for each workload injected there]')
            [CompletionResult]::new('--namespace-from-env', '--namespace-from-env', [CompletionResultType]::ParameterName, 'Without -n, the namespace of objects that name none is the value of the environment variable VAR (Helm 4''s post-renderer plugin passes HELM_NAMESPACE, the namespace of the release); VAR unset is an error')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Most bytes one input (a file, or standard input) may hold, in bytes or with a suffix: Ki, Mi, Gi, Ti (powers of 1024) or k, M, G, T (powers of 1000), as `256Mi`. Reading stops there: a larger input stops the run (exit 2) naming it. The --context files too')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Embedded profile: linkerd (default; uninject takes the mesh that injected each file) or istio')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'A profile file of your own (start from `kubectl mesh-inject config`)')
            [CompletionResult]::new('--set', '--set', [CompletionResultType]::ParameterName, 'Override a profile value, e.g. --set proxyVersion=edge-26.5.2 (repeatable). Flags win over the workloads'' annotations, which win over the profile')
            [CompletionResult]::new('--kube-version', '--kube-version', [CompletionResultType]::ParameterName, 'Kubernetes version the manifests are for: decides native sidecars (1.29+), the preStop sleep action (1.30+) and PodSecurityPolicy (up to 1.24)')
            [CompletionResult]::new('--native-sidecar', '--native-sidecar', [CompletionResultType]::ParameterName, 'Run the proxy as a native sidecar: auto (where the version has them), always, never. Overrides the profile and the workloads'' annotations')
            [CompletionResult]::new('--security-context', '--security-context', [CompletionResultType]::ParameterName, 'Security context of the injected containers: auto (a PodSecurityPolicy in context up to 1.24, else copy), psp, copy (from the first app container), off')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'Files or directories with cluster objects (LimitRange, ResourceQuota, PodSecurityPolicy, Namespace, the mesh''s ConfigMaps) that apply to the input; objects in the input itself count too (repeatable). Linkerd''s proxy needs the trust anchors of its trust-roots ConfigMap: without them nothing is injected')
            [CompletionResult]::new('--linkerd-chart', '--linkerd-chart', [CompletionResultType]::ParameterName, 'Linkerd''s control-plane chart of the cluster''s release, as `helm pull` writes it (a directory or its .tgz): its partials render the proxy, its init container, the debug container and the volumes. A --context directory holding linkerd-control-plane/ or linkerd-control-plane-*.tgz gives it too')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'kubeconfig file kubectl reads (kubectl''s --kubeconfig)')
            [CompletionResult]::new('--kube-context', '--kube-context', [CompletionResultType]::ParameterName, 'kubeconfig context kubectl uses (kubectl''s --context: this tool''s --context names a saved context)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour the verdicts: auto (on a terminal, unless NO_COLOR is set), always, never')
            [CompletionResult]::new('-R', '-R ', [CompletionResultType]::ParameterName, 'Descend into subdirectories of directories given with -f')
            [CompletionResult]::new('--recursive', '--recursive', [CompletionResultType]::ParameterName, 'Descend into subdirectories of directories given with -f')
            [CompletionResult]::new('--warn-only', '--warn-only', [CompletionResultType]::ParameterName, 'Write the output even when the cluster would reject an injected workload because of the injection; the rejections are reported as warnings (one the workload drew before injection too never stops the output)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Also list the workloads the tool leaves as they are (not sent)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Also list the workloads the tool leaves as they are (not sent)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'kubectl-mesh_inject;version' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'kubectl-mesh_inject;help' {
            [CompletionResult]::new('inject', 'inject', [CompletionResultType]::ParameterValue, 'Inject the proxy (what runs when no subcommand is given)')
            [CompletionResult]::new('uninject', 'uninject', [CompletionResultType]::ParameterValue, 'Remove exactly what inject added')
            [CompletionResult]::new('config', 'config', [CompletionResultType]::ParameterValue, 'Print the effective profile (with --set values applied), to start your own from')
            [CompletionResult]::new('admit', 'admit', [CompletionResultType]::ParameterValue, 'Replay the apiserver''s admission chain for every pod and pod template, with the mutating webhooks in context (and their reinvocation)')
            [CompletionResult]::new('context', 'context', [CompletionResultType]::ParameterValue, 'The cluster''s configuration, saved for --context')
            [CompletionResult]::new('verify', 'verify', [CompletionResultType]::ParameterValue, 'Prove the output is the cluster''s own: send each workload the tool injects to the apiserver as a server-side dry run, once as it was before injection (the cluster''s webhook injects it) and once as the tool injects it, and compare the two pods field by field; exit 1 on any difference')
            [CompletionResult]::new('version', 'version', [CompletionResultType]::ParameterValue, 'Print the version and the proxies the embedded profiles inject (what --version prints)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'kubectl-mesh_inject;help;inject' {
            break
        }
        'kubectl-mesh_inject;help;uninject' {
            break
        }
        'kubectl-mesh_inject;help;config' {
            break
        }
        'kubectl-mesh_inject;help;admit' {
            break
        }
        'kubectl-mesh_inject;help;context' {
            [CompletionResult]::new('save', 'save', [CompletionResultType]::ParameterValue, 'Read, through kubectl, every object of the cluster this tool reads (the mesh''s ConfigMaps, Namespaces, LimitRanges, ResourceQuotas, PodSecurityPolicies, MutatingWebhookConfigurations) and write them into DIR, one file per kind and namespace, for --context DIR. Secrets are never read')
            break
        }
        'kubectl-mesh_inject;help;context;save' {
            break
        }
        'kubectl-mesh_inject;help;verify' {
            break
        }
        'kubectl-mesh_inject;help;version' {
            break
        }
        'kubectl-mesh_inject;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
