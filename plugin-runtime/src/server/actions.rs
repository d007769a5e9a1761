//! The action RPCs (tfplugin6.10): `ValidateActionConfig`, `PlanAction` and `InvokeAction`,
//! whose stream carries the action's [`Progress`] lines and ends with one `Completed` event
//! holding its outcome. An invocation runs in a task of its own that ends when the engine
//! hangs up; the engine's StopProvider reaches it through the provider's `stop`, as for every
//! other call.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::StreamExt;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tonic::Status;

use super::ProviderService;
use super::convert::{decode, diagnostics_of, to_proto_diagnostics, to_proto_schema};
use super::error::ServerError;
use super::tables::{Described, Typed};
use crate::action::{Action, InvokeRequest, Progress};
use crate::diagnostics::Diagnostics;
use crate::proto::tfplugin6 as pb;
use crate::provider::Provider;
use crate::schema::Schema;

pub(super) struct ActionEntry {
    action: Arc<dyn Action>,
    described: Described,
}

impl Typed for ActionEntry {
    fn described(&self) -> &Described {
        &self.described
    }

    fn build_schema(&self) -> Schema {
        self.action.schema()
    }
}

/// The stream `InvokeAction` answers with.
pub(super) type EventStream = tonic::codegen::BoxStream<pb::invoke_action::Event>;

/// The provider's actions by type name.
pub(super) fn table(provider: &dyn Provider) -> BTreeMap<String, Arc<ActionEntry>> {
    provider
        .actions()
        .into_iter()
        .map(|action| {
            let name = action.type_name().to_string();
            let entry = ActionEntry {
                action,
                described: Described::default(),
            };
            (name, Arc::new(entry))
        })
        .collect()
}

impl ProviderService {
    fn action(&self, type_name: &str) -> Result<Arc<ActionEntry>, ServerError> {
        self.actions
            .get(type_name)
            .cloned()
            .ok_or_else(|| ServerError::UnknownAction(type_name.to_string()))
    }

    pub(super) fn action_metadata(&self) -> Vec<pb::get_metadata::ActionMetadata> {
        self.actions
            .keys()
            .map(|name| pb::get_metadata::ActionMetadata {
                type_name: name.clone(),
            })
            .collect()
    }

    pub(super) fn action_schemas(&self) -> std::collections::HashMap<String, pb::ActionSchema> {
        self.actions
            .iter()
            .map(|(name, entry)| {
                let schema = pb::ActionSchema {
                    schema: Some(to_proto_schema(entry.schema())),
                };
                (name.clone(), schema)
            })
            .collect()
    }

    pub(super) fn validate_action(
        &self,
        request: pb::validate_action_config::Request,
    ) -> pb::validate_action_config::Response {
        let result = self.action(&request.type_name).and_then(|entry| {
            let config = decode(
                request.config.as_ref(),
                entry.value_type(),
                "action configuration",
            )?;
            Ok(entry.action.validate(&config))
        });
        pb::validate_action_config::Response {
            diagnostics: diagnostics_of(result),
        }
    }

    pub(super) async fn plan_invocation(
        &self,
        request: pb::plan_action::Request,
    ) -> pb::plan_action::Response {
        let result = match self.action(&request.action_type).and_then(|entry| {
            let config = decode(
                request.config.as_ref(),
                entry.value_type(),
                "action configuration",
            )?;
            Ok((entry, config))
        }) {
            Ok((entry, config)) => Ok(entry.action.plan(&config).await),
            Err(e) => Err(e),
        };
        pb::plan_action::Response {
            diagnostics: diagnostics_of(result),
            deferred: None,
        }
    }

    /// Starts an invocation: its progress lines as they come, then `Completed`.
    pub(super) fn start_invocation(&self, request: pb::invoke_action::Request) -> EventStream {
        let started = self.action(&request.action_type).and_then(|entry| {
            let config = decode(
                request.config.as_ref(),
                entry.value_type(),
                "action configuration",
            )?;
            Ok((entry, config))
        });
        let (entry, config) = match started {
            Ok(started) => started,
            Err(e) => {
                let event = completed(e.into());
                return futures::stream::once(async move { Ok(event) }).boxed();
            }
        };
        let (events, stream) =
            tokio::sync::mpsc::unbounded_channel::<Result<pb::invoke_action::Event, Status>>();
        let lines = events.clone();
        let progress = Progress::new(Progress::INTERVAL, move |message| {
            // The engine hung up: nobody reads the line, and the task below is ending.
            let _ = lines.send(Ok(progress_event(message)));
        });
        let request = InvokeRequest {
            type_name: request.action_type,
            config,
        };
        tokio::spawn(async move {
            let outcome = tokio::select! {
                outcome = entry.action.invoke(request, &progress) => outcome,
                // The engine stopped reading: drop the invocation with its waits.
                () = events.closed() => return,
            };
            progress.flush();
            let _ = events.send(Ok(completed(outcome)));
        });
        UnboundedReceiverStream::new(stream).boxed()
    }
}

fn progress_event(message: String) -> pb::invoke_action::Event {
    pb::invoke_action::Event {
        r#type: Some(pb::invoke_action::event::Type::Progress(
            pb::invoke_action::event::Progress { message },
        )),
    }
}

fn completed(diagnostics: Diagnostics) -> pb::invoke_action::Event {
    pb::invoke_action::Event {
        r#type: Some(pb::invoke_action::event::Type::Completed(
            pb::invoke_action::event::Completed {
                diagnostics: to_proto_diagnostics(diagnostics),
            },
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    use async_trait::async_trait;
    use pb::provider_server::Provider as _;
    use tonic::Request;

    use super::*;
    use crate::codec;
    use crate::diagnostics::{AttributePath, Diagnostic};
    use crate::provider::Resource;
    use crate::schema::{Attribute, Block};
    use crate::types::Type;
    use crate::value::Value;

    /// Counts down from `from`, a progress line per step; refuses a negative start.
    struct Countdown;

    #[async_trait]
    impl Action for Countdown {
        fn type_name(&self) -> &'static str {
            "test_countdown"
        }

        fn schema(&self) -> Schema {
            Schema::new(
                0,
                Block::new("c")
                    .attribute(Attribute::required("from", Type::Number, "f"))
                    .attribute(Attribute::optional("hang", Type::Bool, "h")),
            )
        }

        fn validate(&self, config: &Value) -> Diagnostics {
            match config.get("from").as_i64() {
                Some(n) if n < 0 => Diagnostic::error("Negative start", format!("{n} < 0"))
                    .at(AttributePath::root("from"))
                    .into(),
                _ => Diagnostics::new(),
            }
        }

        async fn invoke(&self, request: InvokeRequest, progress: &Progress) -> Diagnostics {
            if request.config.get("hang").as_bool() == Some(true) {
                let _dropped = SetOnDrop;
                std::future::pending::<()>().await;
            }
            let from = request.config.get("from").as_i64().unwrap_or(0);
            for left in (0..from).rev() {
                progress.report(format!("{left} left"));
            }
            Diagnostic::warning("Lift-off", format!("counted down from {from}")).into()
        }
    }

    static HUNG_INVOCATION_DROPPED: AtomicBool = AtomicBool::new(false);

    struct SetOnDrop;

    impl Drop for SetOnDrop {
        fn drop(&mut self) {
            HUNG_INVOCATION_DROPPED.store(true, Ordering::SeqCst);
        }
    }

    struct WithActions;

    #[async_trait]
    impl Provider for WithActions {
        fn schema(&self) -> Schema {
            Schema::new(0, Block::new("p"))
        }

        async fn configure(&self, _: &Value) -> Diagnostics {
            Diagnostics::new()
        }

        fn resources(&self) -> Vec<Arc<dyn Resource>> {
            Vec::new()
        }

        fn actions(&self) -> Vec<Arc<dyn Action>> {
            vec![Arc::new(Countdown)]
        }
    }

    fn config(from: Value, hang: bool) -> Option<pb::DynamicValue> {
        let value = Value::object([("from", from), ("hang", Value::Bool(hang))]);
        let ty = Countdown.schema().value_type();
        Some(pb::DynamicValue {
            msgpack: codec::encode_msgpack(&value, &ty).expect("encodes"),
            json: Vec::new(),
        })
    }

    async fn invoke(
        service: &ProviderService,
        action_type: &str,
        config: Option<pb::DynamicValue>,
    ) -> Vec<pb::invoke_action::event::Type> {
        let stream = service
            .invoke_action(Request::new(pb::invoke_action::Request {
                action_type: action_type.into(),
                config,
                client_capabilities: None,
            }))
            .await
            .expect("rpc")
            .into_inner();
        let events: Vec<_> = stream.collect().await;
        events
            .into_iter()
            .map(|e| e.expect("an event").r#type.expect("a typed event"))
            .collect()
    }

    #[tokio::test]
    async fn actions_are_declared_validated_planned_and_invoked_with_paced_progress() {
        use pb::invoke_action::event::Type as Event;
        let service = ProviderService::new(Arc::new(WithActions));
        let metadata = service
            .get_metadata(Request::new(pb::get_metadata::Request {}))
            .await
            .expect("rpc")
            .into_inner();
        assert_eq!(metadata.actions[0].type_name, "test_countdown");
        let schemas = service
            .get_provider_schema(Request::new(pb::get_provider_schema::Request {}))
            .await
            .expect("rpc")
            .into_inner();
        let schema = schemas.action_schemas["test_countdown"]
            .schema
            .as_ref()
            .expect("a schema");
        assert_eq!(schema.block.as_ref().expect("a block").attributes[0].name, "from");

        let validated = service
            .validate_action_config(Request::new(pb::validate_action_config::Request {
                type_name: "test_countdown".into(),
                config: config(Value::from(-1i64), false),
            }))
            .await
            .expect("rpc")
            .into_inner();
        assert_eq!(validated.diagnostics[0].summary, "Negative start");
        // Planning checks too, and takes unknown values.
        let planned = service
            .plan_action(Request::new(pb::plan_action::Request {
                action_type: "test_countdown".into(),
                config: config(Value::unknown(), false),
                client_capabilities: None,
            }))
            .await
            .expect("rpc")
            .into_inner();
        assert!(planned.diagnostics.is_empty(), "{:?}", planned.diagnostics);

        // Five lines at once: the first goes out, the last right before the outcome.
        let events = invoke(&service, "test_countdown", config(Value::from(5i64), false)).await;
        let progress: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                Event::Progress(p) => Some(p.message.as_str()),
                Event::Completed(_) => None,
            })
            .collect();
        assert_eq!(progress, ["4 left", "0 left"]);
        match events.last() {
            Some(Event::Completed(done)) => assert_eq!(done.diagnostics[0].summary, "Lift-off"),
            other => panic!("the stream did not end with Completed: {other:?}"),
        }

        let events = invoke(&service, "test_nothing", config(Value::from(1i64), false)).await;
        match &events[..] {
            [Event::Completed(done)] => assert_eq!(done.diagnostics[0].summary, "Unknown action type"),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn an_invocation_ends_when_the_engine_hangs_up() {
        let service = ProviderService::new(Arc::new(WithActions));
        let stream = service
            .invoke_action(Request::new(pb::invoke_action::Request {
                action_type: "test_countdown".into(),
                config: config(Value::from(1i64), true),
                client_capabilities: None,
            }))
            .await
            .expect("rpc")
            .into_inner();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!HUNG_INVOCATION_DROPPED.load(Ordering::SeqCst));
        drop(stream);
        for _ in 0..100 {
            if HUNG_INVOCATION_DROPPED.load(Ordering::SeqCst) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the invocation ran on after the engine dropped its stream");
    }
}
