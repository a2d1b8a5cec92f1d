//! Graceful shutdown: a wait before the proxy stops, and a grace period it fits in.

use serde_json::{Value, json};

use crate::cluster::KubeVersion;
use crate::json::Field;

/// Kubernetes' default `terminationGracePeriodSeconds`.
pub const DEFAULT_GRACE_SECONDS: u64 = 30;
/// Time left after the wait for the proxy itself to stop.
pub const GRACE_MARGIN_SECONDS: u64 = 10;

/// Give `proxy` a preStop wait of `seconds`: the `sleep` action where the
/// target version has it (1.30+), else an exec of `sleep_command`. Returns a
/// note when the wait cannot be added.
pub fn add_pre_stop(
    proxy: &mut Value,
    seconds: u64,
    sleep_command: &[String],
    version: KubeVersion,
) -> Result<(), String> {
    if seconds == 0 {
        return Ok(());
    }
    if proxy
        .field("lifecycle")
        .and_then(|l| l.field("preStop"))
        .is_some()
    {
        return Err(format!(
            "the proxy already has a preStop hook; the {seconds}s wait before exit was not added"
        ));
    }
    let handler = if version.has_sleep_action() {
        json!({"sleep": {"seconds": seconds}})
    } else if !sleep_command.is_empty() {
        let mut command: Vec<Value> = sleep_command.iter().map(|s| json!(s)).collect();
        command.push(json!(seconds.to_string()));
        json!({"exec": {"command": command}})
    } else {
        return Err(format!(
            "no preStop wait added: the proxy image has no sleep binary and the preStop sleep action needs Kubernetes 1.30+ (target {version})"
        ));
    };
    let Value::Object(container) = proxy else {
        return Ok(());
    };
    let lifecycle = container.entry("lifecycle").or_insert_with(|| json!({}));
    if let Value::Object(lifecycle) = lifecycle {
        lifecycle.insert("preStop".into(), handler);
    }
    Ok(())
}

/// The grace period the pod needs for a `wait`-second preStop wait, when its
/// current one (`None`: the default 30 s) is too short.
pub fn grace_needed(wait: u64, current: Option<u64>) -> Option<u64> {
    let current = current.unwrap_or(DEFAULT_GRACE_SECONDS);
    (wait > 0 && wait + GRACE_MARGIN_SECONDS > current).then_some(wait + GRACE_MARGIN_SECONDS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleep_action_from_1_30_exec_before() {
        let mut proxy = json!({"name": "p"});
        add_pre_stop(
            &mut proxy,
            5,
            &["/bin/sleep".into()],
            KubeVersion::new(1, 30),
        )
        .expect("added");
        assert_eq!(
            proxy["lifecycle"]["preStop"],
            json!({"sleep": {"seconds": 5}})
        );
        let mut old = json!({"name": "p"});
        add_pre_stop(&mut old, 5, &["/bin/sleep".into()], KubeVersion::new(1, 29)).expect("added");
        assert_eq!(
            old["lifecycle"]["preStop"],
            json!({"exec": {"command": ["/bin/sleep", "5"]}})
        );
        let mut distroless = json!({"name": "p"});
        assert!(add_pre_stop(&mut distroless, 5, &[], KubeVersion::new(1, 29)).is_err());
        assert!(distroless.field("lifecycle").is_none());
    }

    #[test]
    fn grace_is_raised_only_when_the_wait_does_not_fit() {
        assert_eq!(grace_needed(5, None), None);
        assert_eq!(grace_needed(25, None), Some(35));
        assert_eq!(grace_needed(25, Some(60)), None);
        assert_eq!(grace_needed(0, Some(1)), None);
    }
}
