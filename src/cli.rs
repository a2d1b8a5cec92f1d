//! Command-line interface definition.

use std::path::PathBuf;

use clap::builder::PossibleValuesParser;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::cluster::KubeVersion;
use crate::source::namespace_name;

/// Pre-inject a service mesh proxy sidecar into Kubernetes manifests, offline.
///
/// Reads manifests from files, directories or standard input and writes them
/// back with the proxy injected into every workload. Nothing else in the files
/// changes: comments, key order and untouched documents stay as they were.
#[derive(Debug, Parser)]
#[command(
    name = "kubectl-mesh_inject",
    bin_name = "kubectl mesh-inject",
    version,
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  kubectl mesh-inject context save cluster/\n  kubectl mesh-inject -f deploy.yaml --context cluster/ | kubectl apply -f -\n  kubectl mesh-inject -R -f k8s/ --context cluster/ --in-place\n  kubectl mesh-inject -R -f k8s/ --context cluster/ --check\n  kubectl mesh-inject -f deploy.yaml --context cluster/ --diff\n  kubectl mesh-inject uninject -f injected.yaml"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub inject: InjectArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Inject the proxy (what runs when no subcommand is given).
    Inject(InjectArgs),
    /// Remove exactly what inject added.
    Uninject(UninjectArgs),
    /// Print the effective profile (with --set values applied), to start your own from.
    Config(ProfileArgs),
    /// Replay the apiserver's admission chain for every pod and pod template,
    /// with the mutating webhooks in context (and their reinvocation).
    Admit(AdmitArgs),
    /// The cluster's configuration, saved for --context.
    #[command(subcommand)]
    Context(ContextCommand),
    /// Prove the output is the cluster's own: send each workload the tool
    /// injects to the apiserver as a server-side dry run, once as it was
    /// before injection (the cluster's webhook injects it) and once as the
    /// tool injects it, and compare the two pods field by field; exit 1 on
    /// any difference.
    Verify(VerifyArgs),
    /// Print the version and the proxies the embedded profiles inject (what --version prints).
    Version,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  kubectl mesh-inject admit -f deploy.yaml --context cluster/ --trace\n  kubectl mesh-inject -f deploy.yaml --context cluster/ | kubectl mesh-inject admit --context cluster/\n  kubectl mesh-inject admit -f deploy.yaml --context cluster/ --compare --kube-version 1.14"
)]
pub struct AdmitArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Files or directories with cluster objects: LimitRange, ResourceQuota,
    /// PodSecurityPolicy, Namespace, MutatingWebhookConfiguration,
    /// WebhookEmulation and the mesh's ConfigMaps, Linkerd's trust anchors
    /// among them, which its injector needs (repeatable); objects in the
    /// input count too.
    #[arg(long, value_name = "PATH")]
    pub context: Vec<PathBuf>,
    /// Linkerd's control-plane chart of the cluster's release, as `helm pull`
    /// writes it (a directory or its .tgz): its partials render what Linkerd's
    /// webhook injects. A --context directory holding linkerd-control-plane/
    /// or linkerd-control-plane-*.tgz gives it too.
    #[arg(long, value_name = "PATH")]
    pub linkerd_chart: Option<PathBuf>,
    /// Kubernetes version of the apiserver to replay.
    #[arg(long, value_name = "X.Y", default_value_t = KubeVersion::CURRENT)]
    pub kube_version: KubeVersion,
    /// Print every step: pass, plugin or webhook, whether it mutated, its patch.
    #[arg(long)]
    pub trace: bool,
    /// Run both paths for each workload: the webhook path (the input as it
    /// is) and the static path (injected by this tool first), and show where
    /// they differ.
    #[arg(long)]
    pub compare: bool,
    /// Output on standard output: text (a verdict line per object), or the
    /// pods as they would be stored, as yaml or json.
    #[arg(short = 'o', long, value_enum, default_value_t = AdmitFormat::Text)]
    pub output: AdmitFormat,
    /// Native sidecars for the mesh's injector: auto, always, never.
    #[arg(long, value_enum, value_name = "WHEN")]
    pub native_sidecar: Option<NativeSidecar>,
    #[command(flatten)]
    pub report: ReportArgs,
    #[command(flatten)]
    pub profile: ProfileArgs,
}

#[derive(Debug, Subcommand)]
pub enum ContextCommand {
    /// Read, through kubectl, every object of the cluster this tool reads
    /// (the mesh's ConfigMaps, Namespaces, LimitRanges, ResourceQuotas,
    /// PodSecurityPolicies, MutatingWebhookConfigurations) and write them
    /// into DIR, one file per kind and namespace, for --context DIR.
    /// Secrets are never read.
    Save(SaveArgs),
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  kubectl mesh-inject context save cluster/\n  kubectl mesh-inject context save cluster/ --profile istio --kube-context prod\n  kubectl mesh-inject context save cluster/ -- --as=ci --request-timeout=20s\n  kubectl mesh-inject -f deploy.yaml --context cluster/"
)]
pub struct SaveArgs {
    /// Directory to write into (created when missing). Files this command
    /// wrote before are replaced or removed; other files are left alone.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Mesh whose ConfigMaps to save: linkerd or istio [default: both, each
    /// one the cluster has]
    #[arg(long, value_name = "NAME", value_parser = profile_names())]
    pub profile: Option<String>,
    /// Namespace of Linkerd's control plane [default: the linkerd profile's
    /// controlPlaneNamespace, linkerd]
    #[arg(long, value_name = "NAMESPACE", value_parser = namespace_name)]
    pub linkerd_namespace: Option<String>,
    /// Namespace of Istio's control plane [default: the istio profile's
    /// istioNamespace, istio-system]
    #[arg(long, value_name = "NAMESPACE", value_parser = namespace_name)]
    pub istio_namespace: Option<String>,
    #[command(flatten)]
    pub kubectl: KubectlArgs,
}

/// How to reach the cluster: through kubectl, with the user's kubeconfig.
#[derive(Debug, Args)]
pub struct KubectlArgs {
    /// kubeconfig file kubectl reads (kubectl's --kubeconfig).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// kubeconfig context kubectl uses (kubectl's --context: this tool's
    /// --context names a saved context).
    #[arg(long, value_name = "NAME")]
    pub kube_context: Option<String>,
    /// Further flags for every kubectl call, after `--` (`-- --as=ci`).
    #[arg(last = true, value_name = "KUBECTL_FLAGS")]
    pub kubectl_flags: Vec<String>,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  kubectl mesh-inject verify -f deploy.yaml --context cluster/\n  kubectl mesh-inject verify -R -f k8s/ --kube-context prod\n  kubectl mesh-inject verify -f deploy.yaml -- --as=ci --request-timeout=20s"
)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub profile: ProfileArgs,
    #[command(flatten)]
    pub options: InjectOptions,
    #[command(flatten)]
    pub kubectl: KubectlArgs,
    /// Also list the workloads the tool leaves as they are (not sent).
    #[arg(short, long)]
    pub verbose: bool,
    /// When to colour the verdicts: auto (on a terminal, unless NO_COLOR is
    /// set), always, never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AdmitFormat {
    Text,
    Yaml,
    Json,
}

#[derive(Debug, Args)]
pub struct InjectArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub profile: ProfileArgs,
    #[command(flatten)]
    pub options: InjectOptions,
}

/// What only injecting takes: uninject reads the input, the output and the
/// profile alone.
#[derive(Debug, Args)]
pub struct InjectOptions {
    /// Kubernetes version the manifests are for: decides native sidecars (1.29+),
    /// the preStop sleep action (1.30+) and PodSecurityPolicy (up to 1.24).
    #[arg(long, value_name = "X.Y", default_value_t = KubeVersion::CURRENT)]
    pub kube_version: KubeVersion,
    /// Run the proxy as a native sidecar: auto (where the version has them), always, never.
    /// Overrides the profile and the workloads' annotations.
    #[arg(long, value_enum, value_name = "WHEN")]
    pub native_sidecar: Option<NativeSidecar>,
    /// Security context of the injected containers: auto (a PodSecurityPolicy in
    /// context up to 1.24, else copy), psp, copy (from the first app container), off.
    #[arg(long, value_enum, default_value_t = SecurityContext::Auto, value_name = "MODE")]
    pub security_context: SecurityContext,
    /// Files or directories with cluster objects (LimitRange, ResourceQuota,
    /// PodSecurityPolicy, Namespace, the mesh's ConfigMaps) that apply to the
    /// input; objects in the input itself count too (repeatable). Linkerd's
    /// proxy needs the trust anchors of its trust-roots ConfigMap: without
    /// them nothing is injected.
    #[arg(long, value_name = "PATH")]
    pub context: Vec<PathBuf>,
    /// Linkerd's control-plane chart of the cluster's release, as `helm pull`
    /// writes it (a directory or its .tgz): its partials render the proxy, its
    /// init container, the debug container and the volumes. A --context
    /// directory holding linkerd-control-plane/ or linkerd-control-plane-*.tgz
    /// gives it too.
    #[arg(long, value_name = "PATH")]
    pub linkerd_chart: Option<PathBuf>,
    /// Write the output even when the cluster would reject an injected
    /// workload because of the injection; the rejections are reported as
    /// warnings (one the workload drew before injection too never stops the
    /// output).
    #[arg(long)]
    pub warn_only: bool,
}

#[derive(Debug, Args)]
pub struct UninjectArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub profile: ProfileArgs,
}

/// Which profile, and overrides of its values.
#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// Embedded profile: linkerd (default; uninject takes the mesh that injected each file) or istio.
    #[arg(long, value_name = "NAME", conflicts_with = "config", value_parser = profile_names())]
    pub profile: Option<String>,
    /// A profile file of your own (start from `kubectl mesh-inject config`).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Override a profile value, e.g. --set proxyVersion=edge-26.5.2 (repeatable).
    /// Flags win over the workloads' annotations, which win over the profile.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
}

/// The embedded profiles' names: the values `--profile` takes (and completes).
fn profile_names() -> PossibleValuesParser {
    PossibleValuesParser::new(crate::profile::EMBEDDED.iter().map(|(name, _)| *name))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NativeSidecar {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SecurityContext {
    Auto,
    Psp,
    Copy,
    Off,
}

#[derive(Debug, Args)]
pub struct CommonArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Output format on standard output.
    #[arg(short = 'o', long, value_enum, default_value_t = Format::Yaml)]
    pub output: Format,
    /// Show a unified diff of what would change instead of the manifests;
    /// exit 1 when there are differences, 0 when none, as `kubectl diff` does.
    #[arg(long, group = "mode")]
    pub diff: bool,
    /// Rewrite the input files (atomically) instead of printing.
    #[arg(long, group = "mode")]
    pub in_place: bool,
    /// With --in-place, rewrite read-only files too (refused otherwise).
    #[arg(long, requires = "in_place")]
    pub overwrite_read_only: bool,
    /// Write nothing; exit 1 and list the files that would change.
    #[arg(long, group = "mode")]
    pub check: bool,
    #[command(flatten)]
    pub report: ReportArgs,
    /// Reuse nothing from one workload to the next: every proxy, filling
    /// and block of text made for real. The output is the same, only
    /// slower: the reference the tests hold the reuse to, and a way to rule
    /// it out (see docs/development.md).
    #[arg(long, hide = true)]
    pub no_reuse: bool,
}

impl CommonArgs {
    /// What the run reuses from one workload to the next.
    pub fn reuse(&self) -> crate::reuse::Mode {
        match self.no_reuse {
            true => crate::reuse::Mode::Reference,
            false => crate::reuse::Mode::Reuse,
        }
    }
}

/// Where the manifests come from.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// File or directory with manifests; `-` reads standard input (repeatable).
    /// Without -f, standard input is read when it is not a terminal.
    #[arg(short = 'f', long = "filename", value_name = "PATH")]
    pub filenames: Vec<PathBuf>,
    /// Files given without -f, as pre-commit and xargs pass them.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Descend into subdirectories of directories given with -f.
    #[arg(short = 'R', long)]
    pub recursive: bool,
    /// Leave out input files matching GLOB (repeatable): without a `/`,
    /// matched against each file and directory name (`templates`,
    /// `*.tpl.yaml`); with one, against the path (`charts/**`). The syntax
    /// is ripgrep's and fd's: `*`, `?`, `[a-z]`, `[!a]`, `{a,b}`, `**`. A
    /// Helm chart's templates and kustomize patches are left out without it.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<crate::source::Glob>,
    /// Namespace of objects that name none [default: default, and the
    /// report says so for each workload injected there]
    #[arg(short = 'n', long, value_name = "NAMESPACE", value_parser = namespace_name)]
    pub namespace: Option<String>,
    /// Without -n, the namespace of objects that name none is the value of
    /// the environment variable VAR (Helm 4's post-renderer plugin passes
    /// HELM_NAMESPACE, the namespace of the release); VAR unset is an error
    #[arg(long, value_name = "VAR")]
    pub namespace_from_env: Option<String>,
    /// The namespace was given by a KRM function's config, not by -n: the
    /// report says so.
    #[arg(skip)]
    pub namespace_in_function_config: bool,
    /// Most bytes one input (a file, or standard input) may hold, in bytes
    /// or with a suffix: Ki, Mi, Gi, Ti (powers of 1024) or k, M, G, T
    /// (powers of 1000), as `256Mi`. Reading stops there: a larger input
    /// stops the run (exit 2) naming it. The --context files too.
    #[arg(long, value_name = "SIZE", default_value = "256Mi", value_parser = byte_size)]
    pub max_input_bytes: u64,
}

impl Cli {
    /// The `--color` of the command line (`auto` for commands without one).
    pub fn color(&self) -> ColorChoice {
        match &self.command {
            None => self.inject.common.report.color,
            Some(Command::Inject(args)) => args.common.report.color,
            Some(Command::Uninject(args)) => args.common.report.color,
            Some(Command::Admit(args)) => args.report.color,
            Some(Command::Verify(args)) => args.color,
            Some(Command::Config(_) | Command::Context(_) | Command::Version) => ColorChoice::Auto,
        }
    }

    /// The `--report` format of the command line (text for commands without one).
    pub fn report_format(&self) -> ReportFormat {
        match &self.command {
            None => self.inject.common.report.format,
            Some(Command::Inject(args)) => args.common.report.format,
            Some(Command::Uninject(args)) => args.common.report.format,
            Some(Command::Admit(args)) => args.report.format,
            Some(
                Command::Verify(_) | Command::Config(_) | Command::Context(_) | Command::Version,
            ) => ReportFormat::Text,
        }
    }
}

impl InputArgs {
    /// Every path given, with -f or without.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.filenames.iter().chain(&self.files).cloned().collect()
    }
}

/// The report on standard error, and colours.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Print no report on standard error.
    #[arg(short, long)]
    pub quiet: bool,
    /// List every object in the report, also those left as expected (kinds
    /// without a pod, workloads already injected); by default the report
    /// lists what changed, what was skipped for a reason, warnings and
    /// rejections, then the summary.
    #[arg(short, long, conflicts_with = "quiet")]
    pub verbose: bool,
    /// Report format on standard error: text, or json (versioned, for tools).
    #[arg(long = "report", value_enum, default_value_t = ReportFormat::Text, value_name = "FORMAT")]
    pub format: ReportFormat,
    /// When to colour the diff, errors, warnings and rejections: auto (on a
    /// terminal, unless NO_COLOR is set), always, never.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The manifests, edited in place.
    Yaml,
    /// The objects as JSON (a `List` when there are several).
    Json,
    /// The RFC 6902 JSON Patch of each changed object.
    Patch,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Text,
    Json,
}

/// A size in bytes, as `--max-input-bytes` takes it: digits, then a
/// suffix of Kubernetes' quantities (Ki, Mi, Gi, Ti; k, M, G, T), or none.
fn byte_size(text: &str) -> Result<u64, String> {
    const SUFFIXES: [(&str, u64); 8] = [
        ("Ki", 1 << 10),
        ("Mi", 1 << 20),
        ("Gi", 1 << 30),
        ("Ti", 1 << 40),
        ("k", 1_000),
        ("M", 1_000_000),
        ("G", 1_000_000_000),
        ("T", 1_000_000_000_000),
    ];
    let (digits, unit) = SUFFIXES
        .iter()
        .find_map(|(suffix, unit)| Some((text.strip_suffix(suffix)?, *unit)))
        .unwrap_or((text, 1));
    let refused = || {
        format!(
            "{text:?} is not a size: give bytes, or a number with Ki, Mi, Gi, Ti, k, M, G or T (256Mi)"
        )
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(refused());
    }
    let size = digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(unit))
        .ok_or_else(refused)?;
    if size == 0 {
        return Err("an input of at most 0 bytes could hold nothing: give a size above 0".into());
    }
    Ok(size)
}

#[cfg(test)]
mod namespace_tests {
    use super::byte_size;
    use crate::source::namespace_name;

    #[test]
    fn sizes_read_as_kubernetes_quantities_of_bytes() {
        for (text, size) in [
            ("256Mi", 256 << 20),
            ("1Gi", 1 << 30),
            ("10Ki", 10 << 10),
            ("2Ti", 2 << 40),
            ("5M", 5_000_000),
            ("3k", 3_000),
            ("1G", 1_000_000_000),
            ("1T", 1_000_000_000_000),
            ("12345", 12_345),
        ] {
            assert_eq!(byte_size(text), Ok(size), "{text}");
        }
        for bad in [
            "",
            "Mi",
            "1.5Gi",
            "-1",
            "1 Mi",
            "1MiB",
            "1m",
            "x",
            "99999999999Ti",
            "0",
        ] {
            assert!(byte_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn namespaces_are_dns_labels() {
        for good in ["default", "shop-1", "a", "0"] {
            assert!(namespace_name(good).is_ok(), "{good}");
        }
        for bad in ["", "Bad_NS!", "-shop", "shop-", "Shop", &"a".repeat(64)] {
            assert!(namespace_name(bad).is_err(), "{bad}");
        }
    }
}
