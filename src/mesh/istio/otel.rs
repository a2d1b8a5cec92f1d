//! The OpenTelemetry resource attributes Istio gives a proxy when a tracing
//! provider of the mesh config enriches spans with OTel's semantic
//! conventions (`serviceAttributeEnrichment: OTEL_SEMANTIC_CONVENTIONS`):
//! the `OTEL_RESOURCE_ATTRIBUTES` env its template writes from the template
//! function `otelResourceAttributes` (`pkg/kube/inject/template.go`). One
//! rule, read by the template function and by the embedded profile.

/// `service.namespace`, `service.version` and `service.instance.id`, comma
/// separated: the pod's `resource.opentelemetry.io/*` annotations win, then
/// the namespace, the `app.kubernetes.io/version` label or the only
/// container's image tag and digest, and `NAMESPACE.$(POD_NAME).CONTAINER`
/// for the first container. `containers` are `(name, image)`.
pub fn resource_attributes(
    annotation: &dyn Fn(&str) -> Option<String>,
    label: &dyn Fn(&str) -> Option<String>,
    namespace: &str,
    containers: &[(&str, &str)],
) -> String {
    let given =
        |read: &dyn Fn(&str) -> Option<String>, key: &str| read(key).filter(|v| !v.is_empty());
    let mut attributes = Vec::new();
    if let Some(v) = given(annotation, "resource.opentelemetry.io/service.namespace") {
        attributes.push(format!("service.namespace={v}"));
    } else if !namespace.is_empty() {
        attributes.push(format!("service.namespace={namespace}"));
    }
    let version = given(annotation, "resource.opentelemetry.io/service.version")
        .or_else(|| given(label, "app.kubernetes.io/version"))
        .or_else(|| match containers {
            [(_, image)] => image_version(image),
            _ => None,
        });
    if let Some(v) = version {
        attributes.push(format!("service.version={v}"));
    }
    if let Some(v) = given(annotation, "resource.opentelemetry.io/service.instance.id") {
        attributes.push(format!("service.instance.id={v}"));
    } else if let Some((name, _)) = containers.first() {
        attributes.push(format!(
            "service.instance.id={namespace}.$(POD_NAME).{name}"
        ));
    }
    attributes.join(",")
}

/// An image's tag and digest as a version: `1.2@sha256:…`, the digest, or the tag.
fn image_version(image: &str) -> Option<String> {
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, digest),
        None => (image, ""),
    };
    let tag = match (name.rfind(':'), name.rfind('/')) {
        (Some(colon), slash) if slash.is_none_or(|s| colon > s) => {
            name.get(colon + 1..).unwrap_or("")
        }
        _ => "",
    };
    match (tag.is_empty(), digest.is_empty()) {
        (false, false) => Some(format!("{tag}@{digest}")),
        (true, false) => Some(digest.to_string()),
        (false, true) => Some(tag.to_string()),
        (true, true) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn from_the_namespace_the_image_and_the_first_container() {
        let one = [("app", "registry.example.com:5000/shop:1.2@sha256:ab")];
        assert_eq!(
            resource_attributes(&none, &none, "shop", &one),
            "service.namespace=shop,service.version=1.2@sha256:ab,service.instance.id=shop.$(POD_NAME).app"
        );
        // With two containers the image says nothing; a port is no tag.
        let two = [("app", "registry:5000/shop"), ("side", "x:2")];
        assert_eq!(
            resource_attributes(&none, &none, "shop", &two),
            "service.namespace=shop,service.instance.id=shop.$(POD_NAME).app"
        );
    }

    #[test]
    fn image_versions_take_tag_and_digest() {
        assert_eq!(
            image_version("reg:5000/app:1.2@sha256:ab").as_deref(),
            Some("1.2@sha256:ab")
        );
        assert_eq!(image_version("reg:5000/app").as_deref(), None);
        assert_eq!(image_version("app@sha256:ab").as_deref(), Some("sha256:ab"));
    }

    #[test]
    fn annotations_win_then_the_version_label() {
        let annotation = |key: &str| match key {
            "resource.opentelemetry.io/service.namespace" => Some("team".to_string()),
            "resource.opentelemetry.io/service.instance.id" => Some("me".to_string()),
            "resource.opentelemetry.io/service.version" => Some(String::new()),
            _ => None,
        };
        let label = |key: &str| (key == "app.kubernetes.io/version").then(|| "3".to_string());
        assert_eq!(
            resource_attributes(&annotation, &label, "shop", &[("app", "shop:1")]),
            "service.namespace=team,service.version=3,service.instance.id=me"
        );
    }
}
