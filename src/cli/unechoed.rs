//! Arguments that may carry a secret (`--set target.headers.Authorization=…`, `--matrix`):
//! parsed so that a refusal names the flag and what is wrong, never the value. clap's own
//! error for a value it cannot parse quotes the whole argument.

use clap::builder::TypedValueParser;
use clap::error::ErrorKind;
use std::ffi::OsStr;
use std::marker::PhantomData;
use std::str::FromStr;

/// A value parser for `T` whose errors never show the value given.
#[derive(Clone)]
pub struct Unechoed<T>(PhantomData<fn() -> T>);

impl<T> Default for Unechoed<T> {
    /// The parser, for `#[arg(value_parser = Unechoed::<T>::default())]`.
    fn default() -> Self {
        Unechoed(PhantomData)
    }
}

impl<T> TypedValueParser for Unechoed<T>
where
    T: FromStr + Clone + Send + Sync + 'static,
    T::Err: std::fmt::Display,
{
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        let flag = arg.map_or_else(|| "the argument".to_string(), |a| a.to_string());
        let refuse = |reason: String| {
            clap::Error::raw(ErrorKind::ValueValidation, format!("{flag}: {reason}\n"))
                .with_cmd(cmd)
        };
        let text = value
            .to_str()
            .ok_or_else(|| refuse("the value is not UTF-8 text".into()))?;
        text.parse::<T>().map_err(|e| refuse(e.to_string()))
    }
}
