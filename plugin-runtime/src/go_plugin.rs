//! go-plugin's own services beside the provider: the controller (the engine's
//! `Shutdown`), the stdio mirror and the connection broker. Our plugins write nothing to
//! stdio after the handshake and never broker connections, so those two only keep their
//! streams open until shutdown, which is what the engine expects of them.

use futures::{Stream, StreamExt};
use tokio::sync::watch;
use tonic::{Request, Response, Status, Streaming};

use crate::proto::plugin as pb;

/// Set once when the plugin should stop; every service watches it.
#[derive(Clone)]
pub struct ShutdownSignal {
    sender: watch::Sender<bool>,
}

impl ShutdownSignal {
    pub fn new() -> ShutdownSignal {
        ShutdownSignal {
            sender: watch::Sender::new(false),
        }
    }

    pub fn trigger(&self) {
        self.sender.send_replace(true);
    }

    /// Resolves once [`trigger`](Self::trigger) was called.
    pub fn wait(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut receiver = self.sender.subscribe();
        async move {
            // An error means the sender is gone, which only happens at exit.
            let _ = receiver.wait_for(|stopped| *stopped).await;
        }
    }

    /// A stream that sends nothing and ends at shutdown.
    fn silent_stream<T: Send + 'static>(&self) -> impl Stream<Item = Result<T, Status>> + Send + 'static {
        futures::stream::once(self.wait()).filter_map(|()| async { None })
    }
}

impl Default for ShutdownSignal {
    fn default() -> ShutdownSignal {
        ShutdownSignal::new()
    }
}

pub struct Controller(pub ShutdownSignal);

#[tonic::async_trait]
impl pb::grpc_controller_server::GrpcController for Controller {
    async fn shutdown(&self, _: Request<pb::Empty>) -> Result<Response<pb::Empty>, Status> {
        tracing::debug!("the engine asked the plugin to shut down");
        self.0.trigger();
        Ok(Response::new(pb::Empty {}))
    }
}

pub struct Stdio(pub ShutdownSignal);

#[tonic::async_trait]
impl pb::grpc_stdio_server::GrpcStdio for Stdio {
    async fn stream_stdio(
        &self,
        _: Request<()>,
    ) -> Result<Response<tonic::codegen::BoxStream<pb::StdioData>>, Status> {
        Ok(Response::new(Box::pin(self.0.silent_stream())))
    }
}

pub struct Broker(pub ShutdownSignal);

#[tonic::async_trait]
impl pb::grpc_broker_server::GrpcBroker for Broker {
    async fn start_stream(
        &self,
        request: Request<Streaming<pb::ConnInfo>>,
    ) -> Result<Response<tonic::codegen::BoxStream<pb::ConnInfo>>, Status> {
        // Read and ignore what the engine sends so its side of the stream stays healthy.
        let mut inbound = request.into_inner();
        tokio::spawn(async move { while let Some(Ok(_)) = inbound.next().await {} });
        Ok(Response::new(Box::pin(self.0.silent_stream())))
    }
}
