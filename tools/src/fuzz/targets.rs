//! What each generated input checks. Every target must end without a panic; beyond that:
//! typed values survive msgpack and cty JSON exactly (value and bytes), anything a decoder
//! accepts encodes and decodes again to the same bytes, and the configuration validators of
//! both providers take any value of their schema.

use std::sync::Arc;

use plugin_runtime::codec::{decode_json, decode_msgpack, encode_msgpack};
use plugin_runtime::{Diagnostics, Provider, Type, Value};

use super::mutate;
use super::rng::Rng;
use super::values::{Unknowns, any_type, cty_json, value_of};

/// One kind of generated input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    MsgpackRoundTrip,
    JsonRoundTrip,
    MsgpackMutated,
    MsgpackRandom,
    JsonMutated,
    JsonRandom,
    Timeouts,
    Validators,
}

impl Target {
    /// Every target; input `i` goes to `ALL[i % ALL.len()]`.
    pub const ALL: [Target; 8] = [
        Target::MsgpackRoundTrip,
        Target::JsonRoundTrip,
        Target::MsgpackMutated,
        Target::MsgpackRandom,
        Target::JsonMutated,
        Target::JsonRandom,
        Target::Timeouts,
        Target::Validators,
    ];

    pub fn of_input(index: u64) -> Target {
        Target::ALL[(index % Target::ALL.len() as u64) as usize]
    }

    pub fn name(self) -> &'static str {
        match self {
            Target::MsgpackRoundTrip => "msgpack round trip of typed values",
            Target::JsonRoundTrip => "cty JSON of typed values, decoded",
            Target::MsgpackMutated => "mutated msgpack, decoded",
            Target::MsgpackRandom => "random msgpack-like bytes, decoded",
            Target::JsonMutated => "mutated cty JSON, decoded",
            Target::JsonRandom => "random JSON-like text, decoded",
            Target::Timeouts => "timeouts duration strings",
            Target::Validators => "provider configuration validators",
        }
    }
}

/// A configuration validator of one provider: the provider block, a resource or a data
/// source, with its schema's type.
pub struct Validator {
    pub name: &'static str,
    ty: Type,
    validate: Box<dyn Fn(&Value) -> Diagnostics + Send + Sync>,
}

/// Every validator of `provider`.
pub fn validators(provider: Arc<dyn Provider>) -> Vec<Validator> {
    let mut out = Vec::new();
    for resource in provider.resources() {
        out.push(Validator {
            name: resource.type_name(),
            ty: resource.schema().value_type(),
            validate: Box::new(move |config| resource.validate(config)),
        });
    }
    for data_source in provider.data_sources() {
        out.push(Validator {
            name: data_source.type_name(),
            ty: data_source.schema().value_type(),
            validate: Box::new(move |config| data_source.validate(config)),
        });
    }
    out.push(Validator {
        name: "provider",
        ty: provider.schema().value_type(),
        validate: Box::new(move |config| provider.validate_config(config)),
    });
    out
}

/// A property that did not hold: what was given and what came out.
pub type Problem = String;

/// How an input that broke nothing ended: taken (decoded, parsed, validated without an
/// error) or refused with an error, as broken input should mostly be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Accepted,
    Refused,
}

/// Runs one input of `target` drawn from `rng`.
pub fn check(target: Target, rng: &mut Rng, validators: &[Validator]) -> Result<Verdict, Problem> {
    match target {
        Target::MsgpackRoundTrip => {
            let ty = any_type(rng, 3);
            let value = value_of(rng, &ty, Unknowns::Allowed);
            let bytes = encode(&value, &ty)?;
            let back = decode_msgpack(&bytes, &ty).map_err(|e| format!("{bytes:02x?} as {ty:?}: {e}"))?;
            if back != value {
                return Err(format!("{value:?} of {ty:?} decoded as {back:?}"));
            }
            same_bytes(&bytes, &back, &ty)?;
            Ok(Verdict::Accepted)
        }
        Target::JsonRoundTrip => {
            let ty = any_type(rng, 3);
            let value = value_of(rng, &ty, Unknowns::None);
            let text = cty_json(&value, &ty);
            let back = decode_json(text.as_bytes(), &ty).map_err(|e| format!("{text} as {ty:?}: {e}"))?;
            if back != value {
                return Err(format!("{text} of {ty:?} decoded as {back:?}, not {value:?}"));
            }
            same_bytes(&encode(&value, &ty)?, &back, &ty)?;
            Ok(Verdict::Accepted)
        }
        Target::MsgpackMutated => {
            let ty = any_type(rng, 3);
            let bytes = encode(&value_of(rng, &ty, Unknowns::Allowed), &ty)?;
            let broken = mutate::bytes(rng, &bytes);
            let ty = if rng.chance(25) { any_type(rng, 3) } else { ty };
            stable(decode_msgpack(&broken, &ty).ok(), &ty)
        }
        Target::MsgpackRandom => {
            let ty = any_type(rng, 3);
            stable(decode_msgpack(&mutate::msgpack_like(rng), &ty).ok(), &ty)
        }
        Target::JsonMutated => {
            let ty = any_type(rng, 3);
            let text = cty_json(&value_of(rng, &ty, Unknowns::None), &ty);
            let broken = mutate::json(rng, &text);
            let ty = if rng.chance(25) { any_type(rng, 3) } else { ty };
            stable(decode_json(&broken, &ty).ok(), &ty)
        }
        Target::JsonRandom => {
            let ty = any_type(rng, 3);
            stable(decode_json(&mutate::json_like(rng), &ty).ok(), &ty)
        }
        Target::Timeouts => {
            let text = mutate::duration(rng);
            let parsed = plugin_runtime::duration::parse(&text);
            let resource = Value::object([("timeouts", Value::object([("create", Value::string(&text))]))]);
            let reported = !provider_live::validate_timeouts(&resource).is_empty();
            if parsed.is_err() != reported {
                return Err(format!("{text:?}: parse says {parsed:?}, validate disagrees"));
            }
            Ok(if reported {
                Verdict::Refused
            } else {
                Verdict::Accepted
            })
        }
        Target::Validators => {
            let validator = rng.pick(validators);
            let value = value_of(rng, &validator.ty, Unknowns::Allowed);
            // As the server hands it over: through the wire and back.
            let bytes = encode(&value, &validator.ty)?;
            let config =
                decode_msgpack(&bytes, &validator.ty).map_err(|e| format!("{}: {e}", validator.name))?;
            Ok(if (validator.validate)(&config).has_errors() {
                Verdict::Refused
            } else {
                Verdict::Accepted
            })
        }
    }
}

fn encode(value: &Value, ty: &Type) -> Result<Vec<u8>, Problem> {
    encode_msgpack(value, ty).map_err(|e| format!("{value:?} of {ty:?} does not encode: {e}"))
}

/// `value` encodes to exactly `bytes`.
fn same_bytes(bytes: &[u8], value: &Value, ty: &Type) -> Result<(), Problem> {
    let again = encode(value, ty)?;
    if again != bytes {
        return Err(format!(
            "{value:?} of {ty:?} encodes as {again:02x?}, not {bytes:02x?}"
        ));
    }
    Ok(())
}

/// Whatever a decoder accepted encodes, and decodes again to a value that encodes the same.
fn stable(decoded: Option<Value>, ty: &Type) -> Result<Verdict, Problem> {
    let Some(value) = decoded else {
        return Ok(Verdict::Refused);
    };
    let bytes = encode(&value, ty)?;
    let back =
        decode_msgpack(&bytes, ty).map_err(|e| format!("{value:?} of {ty:?} encodes undecodably: {e}"))?;
    same_bytes(&bytes, &back, ty)?;
    Ok(Verdict::Accepted)
}
