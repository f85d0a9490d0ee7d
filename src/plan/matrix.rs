//! A matrix of variants: one scenario run several times, each with some values replaced
//! (rates × mixes × payloads × user levels …). Written in the scenario's `matrix:` section,
//! given with `--matrix path=v1,v2` on the command line, or both (the command line's axes
//! are crossed with every set of the file's).
//!
//! ```yaml
//! matrix:
//!   headings: {requests.read.weight: "reads %", load.rate: "target req/s"}
//!   columns: [category, load.rate, requests.read.weight]   # optional: order, and which
//!   sets:
//!     - labels: {category: Burst Load}          # constant cells of these rows
//!       set: {requests.read.weight: 95}          # overrides of every variant of the set
//!       vary: {load.rate: [10, 20, 30]}          # crossed, in order: one variant each
//! ```
//! A key may name several paths, comma-separated, that take the same value (a ramp's end
//! and the steady stage after it: `"load.stages[0].rate[1], load.stages[1].rate"`).

use crate::plan::scenario::overrides::{
    display, no_equals, Given, Override, OverrideError, ValuePath,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use yaml_serde::{Mapping, Value};

/// Most variants one matrix may hold (each is a run).
pub const MAX_VARIANTS: usize = 10_000;

/// The `matrix:` section of a scenario.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MatrixSection {
    /// Column headings of the table, by label or path (default: the label or path).
    #[serde(default)]
    pub headings: BTreeMap<String, String>,
    /// The columns shown, in order, by label or path (default: every label, then every
    /// path, in order of first use); a label or path left out is not shown.
    pub columns: Option<Vec<String>>,
    /// Sets of variants, run in order; each set's variants are the product of its `vary`.
    #[serde(default)]
    pub sets: Vec<VariantSet>,
}

/// Variants sharing labels and fixed overrides.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VariantSet {
    /// Cells naming the set's rows, by column, e.g. {category: "Burst Load"}.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, String>")]
    pub labels: Mapping,
    /// Values every variant of the set takes, by path, e.g. {requests.read.weight: 95}.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub set: Mapping,
    /// Values to step through, by path: every combination is a variant, the first path
    /// varying slowest.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, Vec<serde_json::Value>>")]
    pub vary: Mapping,
}

/// An axis from the command line: `path=v1,v2,v3`.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The paths as written (the column's key).
    pub key: String,
    /// The values varied (one path, or several taking the same value).
    pub paths: Vec<ValuePath>,
    /// Its values as written.
    pub values: Vec<String>,
}

impl std::str::FromStr for Axis {
    type Err = OverrideError;

    fn from_str(text: &str) -> Result<Axis, OverrideError> {
        let (path, values) = text
            .split_once('=')
            .ok_or_else(|| no_equals("path=v1,v2,…, e.g. load.rate=10,20,30"))?;
        let paths = paths(path)?;
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
        if values.iter().any(String::is_empty) {
            return Err(OverrideError {
                path: path.to_string(),
                reason: "an empty value in the list".into(),
            });
        }
        Ok(Axis {
            key: path.trim().to_string(),
            paths,
            values,
        })
    }
}

/// The paths of a key: one, or several separated by commas (outside brackets), each
/// checked against the schema.
pub fn paths(key: &str) -> Result<Vec<ValuePath>, OverrideError> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in key.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&key[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&key[start..]);
    out.into_iter()
        .map(|p| {
            let path: ValuePath = p.parse()?;
            path.check()?;
            Ok(path)
        })
        .collect()
}

/// One variant: its cells (labels and values shown) and the overrides that make it.
#[derive(Debug, Clone)]
pub struct Variant {
    /// Label cells, by column name.
    pub labels: Vec<(String, String)>,
    /// Value cells, by key (the set's, then the varied ones), as shown.
    pub values: Vec<(String, String)>,
    /// The overrides, in order.
    pub overrides: Vec<Override>,
}

/// A matrix that cannot be expanded.
#[derive(Debug, thiserror::Error)]
pub enum MatrixError {
    /// A path or value is wrong.
    #[error("matrix: {0}")]
    Override(#[from] OverrideError),
    /// Something else about the section.
    #[error("matrix: {0}")]
    Section(String),
}

/// The variants of `section` (when the scenario has one) crossed with the command line's
/// `axes`, in run order.
pub fn variants(
    section: Option<&MatrixSection>,
    axes: &[Axis],
) -> Result<Vec<Variant>, MatrixError> {
    let single = VariantSet::default();
    let sets: Vec<&VariantSet> = match section {
        Some(s) if !s.sets.is_empty() => s.sets.iter().collect(),
        Some(_) if axes.is_empty() => {
            return Err(MatrixError::Section(
                "give at least one set under matrix.sets".into(),
            ))
        }
        _ => vec![&single],
    };
    let mut out = Vec::new();
    for (n, set) in sets.iter().enumerate() {
        let key = |k: &Value, what: &str| -> Result<String, MatrixError> {
            k.as_str().map(str::to_string).ok_or_else(|| {
                MatrixError::Section(format!(
                    "sets[{n}].{what}: keys are names or paths, as text"
                ))
            })
        };
        let mut labels = Vec::new();
        for (k, v) in &set.labels {
            labels.push((key(k, "labels")?, display(v)));
        }
        let mut fixed: Vec<(String, Vec<ValuePath>, Value)> = Vec::new();
        for (k, v) in &set.set {
            let k = key(k, "set")?;
            fixed.push((k.trim().to_string(), paths(&k)?, v.clone()));
        }
        let mut dims: Vec<Dim> = Vec::new();
        for (k, v) in &set.vary {
            let k = key(k, "vary")?;
            let p = paths(&k)?;
            let Value::Sequence(values) = v else {
                return Err(MatrixError::Section(format!(
                    "sets[{n}].vary.{k}: give a list of values, e.g. [10, 20, 30]"
                )));
            };
            if values.is_empty() {
                return Err(MatrixError::Section(format!(
                    "sets[{n}].vary.{k}: the list is empty"
                )));
            }
            let shown = values.iter().map(display).collect();
            let given = values.iter().cloned().map(Given::Yaml).collect();
            dims.push(Dim {
                key: k.trim().to_string(),
                paths: p,
                given,
                shown,
            });
        }
        for a in axes {
            let given = a.values.iter().cloned().map(Given::Text).collect();
            dims.push(Dim {
                key: a.key.clone(),
                paths: a.paths.clone(),
                given,
                shown: a.values.clone(),
            });
        }
        let count = dims
            .iter()
            .try_fold(1usize, |n, d| n.checked_mul(d.given.len()));
        if count.is_none_or(|c| out.len() + c > MAX_VARIANTS) {
            return Err(MatrixError::Section(format!(
                "more than {MAX_VARIANTS} variants; vary fewer values"
            )));
        }
        let lengths: Vec<usize> = dims.iter().map(|d| d.given.len()).collect();
        for combo in product(&lengths) {
            let mut overrides = Vec::new();
            let mut values = Vec::new();
            for (k, paths, v) in &fixed {
                overrides.extend(paths.iter().map(|p| Override {
                    path: p.clone(),
                    value: Given::Yaml(v.clone()),
                }));
                values.push((k.clone(), display(v)));
            }
            for (d, dim) in dims.iter().enumerate() {
                overrides.extend(dim.paths.iter().map(|p| Override {
                    path: p.clone(),
                    value: dim.given[combo[d]].clone(),
                }));
                values.push((dim.key.clone(), dim.shown[combo[d]].clone()));
            }
            out.push(Variant {
                labels: labels.clone(),
                values,
                overrides,
            });
        }
    }
    Ok(out)
}

/// One varied value: its key, the paths it sets, and its values as given and as shown.
struct Dim {
    key: String,
    paths: Vec<ValuePath>,
    given: Vec<Given>,
    shown: Vec<String>,
}

/// Every combination of one index per dimension, the first dimension slowest.
fn product(lengths: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    for &len in lengths {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                (0..len).map(move |i| {
                    let mut next = prefix.clone();
                    next.push(i);
                    next
                })
            })
            .collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_axes_cross_in_order() {
        let axes: Vec<Axis> = ["load.rate=10,20", "requests.write.weight=5,50"]
            .iter()
            .map(|a| a.parse().unwrap())
            .collect();
        let v = variants(None, &axes).unwrap();
        let cells: Vec<String> = v
            .iter()
            .map(|x| {
                x.values
                    .iter()
                    .map(|(_, s)| s.as_str())
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .collect();
        assert_eq!(cells, ["10/5", "10/50", "20/5", "20/50"]);
        assert!("load.rat=1,2".parse::<Axis>().is_err());
        assert!("load.rate=1,,2".parse::<Axis>().is_err());
    }

    #[test]
    fn sets_carry_labels_and_fixed_values() {
        let section: MatrixSection = yaml_serde::from_str(
            "sets:\n  - labels: {category: Burst}\n    set: {requests.read.weight: 95}\n    vary: {load.rate: [10, 20]}\n  - labels: {category: Soak}\n    set: {load.duration: 30m}\n",
        )
        .unwrap();
        let v = variants(Some(&section), &[]).unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(v[0].labels, [("category".to_string(), "Burst".to_string())]);
        assert_eq!(
            v[1].values,
            [
                ("requests.read.weight".to_string(), "95".to_string()),
                ("load.rate".to_string(), "20".to_string())
            ]
        );
        assert_eq!(
            v[2].values,
            [("load.duration".to_string(), "30m".to_string())]
        );
        let linked: MatrixSection = yaml_serde::from_str(
            "sets: [{vary: {'load.stages[0].rate[1], load.stages[1].rate': [10, 20]}}]",
        )
        .unwrap();
        let v = variants(Some(&linked), &[]).unwrap();
        assert_eq!(v[1].overrides.len(), 2);
        assert_eq!(v[1].values[0].1, "20");
        let bad: MatrixSection = yaml_serde::from_str("sets: [{vary: {load.rat: [1]}}]").unwrap();
        assert!(variants(Some(&bad), &[])
            .unwrap_err()
            .to_string()
            .contains("load.rat"));
    }
}
