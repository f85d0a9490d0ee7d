//! Manifest objects written as YAML by headroom's one emitter ([`crate::yaml`]), its
//! errors as the manifests' own.

use super::KubeError;

/// A manifest object written as YAML.
pub trait Yaml {
    /// The object as one YAML document.
    fn to_yaml(&self) -> Result<String, KubeError>;
}
impl<T: serde::Serialize> Yaml for T {
    fn to_yaml(&self) -> Result<String, KubeError> {
        crate::yaml::to_string(self).map_err(|e| KubeError::Yaml(e.to_string()))
    }
}
