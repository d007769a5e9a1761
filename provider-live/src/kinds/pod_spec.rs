//! The pod template (`template { metadata, spec }`) shared by workload kinds: containers,
//! probes, volumes, tolerations and security contexts, as hashicorp/kubernetes names them.
//!
//! Server defaults seen on a v1.36 apiserver (kube-golden 09-deployment): imagePullPolicy,
//! terminationMessagePath/Policy, ports[].protocol, restartPolicy, terminationGracePeriodSeconds,
//! dnsPolicy, schedulerName are Optional+Computed; `securityContext: {}` and `resources: {}`
//! are left out when not configured; probe thresholds, httpGet scheme and volume file modes
//! are Optional+Computed too.

use super::spec_convert::Field;
use super::spec_convert::Scalar::{Bool, FileMode, Int, IntOrString, IntString, Quantity, Str};
use super::spec_convert::Shape::{Array, List, Map, Object, One, Set};

const EXEC_ACTION: &[Field] = &[Field::optional(
    "command",
    "command",
    List(Str),
    "The command line to run inside the container; not run in a shell.",
)];

const HTTP_HEADER: &[Field] = &[
    Field::optional("name", "name", One(Str), "The header field name."),
    Field::optional("value", "value", One(Str), "The header field value."),
];

const HTTP_GET_ACTION: &[Field] = &[
    Field::optional(
        "host",
        "host",
        One(Str),
        "Host name to connect to; defaults to the pod IP.",
    ),
    Field::optional("path", "path", One(Str), "Path to access on the HTTP server."),
    Field::optional(
        "port",
        "port",
        One(IntOrString),
        "Number or name of the port to access on the container.",
    ),
    Field::defaulted(
        "scheme",
        "scheme",
        One(Str),
        "Scheme to use for connecting: `HTTP` (the default) or `HTTPS`.",
    ),
    Field::optional(
        "http_header",
        "httpHeaders",
        Array(HTTP_HEADER),
        "Custom headers to set in the request.",
    ),
];

const TCP_SOCKET_ACTION: &[Field] = &[Field::required(
    "port",
    "port",
    One(IntOrString),
    "Number or name of the port to access on the container.",
)];

const GRPC_ACTION: &[Field] = &[
    Field::required("port", "port", One(Int), "Port number of the gRPC service."),
    Field::optional(
        "service",
        "service",
        One(Str),
        "Name of the service to place in the gRPC HealthCheckRequest.",
    ),
];

const EXEC: Field = Field::optional(
    "exec",
    "exec",
    Object(EXEC_ACTION),
    "Runs a command in the container.",
);
const HTTP_GET: Field = Field::optional(
    "http_get",
    "httpGet",
    Object(HTTP_GET_ACTION),
    "Performs an HTTP GET.",
);
const TCP_SOCKET: Field = Field::optional(
    "tcp_socket",
    "tcpSocket",
    Object(TCP_SOCKET_ACTION),
    "Opens a TCP connection.",
);

const HANDLER: &[Field] = &[EXEC, HTTP_GET, TCP_SOCKET];

const PROBE: &[Field] = &[
    EXEC,
    HTTP_GET,
    TCP_SOCKET,
    Field::optional(
        "grpc",
        "grpc",
        Object(GRPC_ACTION),
        "Performs a gRPC health check.",
    ),
    Field::defaulted(
        "failure_threshold",
        "failureThreshold",
        One(Int),
        "Consecutive failures for the probe to be considered failed. Defaults to 3.",
    ),
    Field::optional(
        "initial_delay_seconds",
        "initialDelaySeconds",
        One(Int),
        "Seconds after the container has started before the probe is first run.",
    ),
    Field::defaulted(
        "period_seconds",
        "periodSeconds",
        One(Int),
        "How often (in seconds) to probe. Defaults to 10.",
    ),
    Field::defaulted(
        "success_threshold",
        "successThreshold",
        One(Int),
        "Consecutive successes for the probe to be considered successful. Defaults to 1.",
    ),
    Field::defaulted(
        "timeout_seconds",
        "timeoutSeconds",
        One(Int),
        "Seconds after which the probe times out. Defaults to 1.",
    ),
];

const KEY_REF: &[Field] = &[
    Field::optional("key", "key", One(Str), "The key to select."),
    Field::optional("name", "name", One(Str), "Name of the referent."),
    Field::optional(
        "optional",
        "optional",
        One(Bool),
        "Whether the referent or its key may be missing.",
    ),
];

const FIELD_REF: &[Field] = &[
    Field::defaulted(
        "api_version",
        "apiVersion",
        One(Str),
        "Version of the schema the field path is written in; \"v1\" by default.",
    ),
    Field::optional(
        "field_path",
        "fieldPath",
        One(Str),
        "Path of the field to select, e.g. `metadata.name`.",
    ),
];

const RESOURCE_FIELD_REF: &[Field] = &[
    Field::optional(
        "container_name",
        "containerName",
        One(Str),
        "The container whose resource to select.",
    ),
    Field::defaulted(
        "divisor",
        "divisor",
        One(Quantity),
        "Output format of the exposed resources.",
    ),
    Field::required(
        "resource",
        "resource",
        One(Str),
        "The resource to select, e.g. `limits.cpu`.",
    ),
];

const ENV_SOURCE: &[Field] = &[
    Field::optional(
        "config_map_key_ref",
        "configMapKeyRef",
        Object(KEY_REF),
        "Selects a key of a ConfigMap.",
    ),
    Field::optional(
        "field_ref",
        "fieldRef",
        Object(FIELD_REF),
        "Selects a field of the pod.",
    ),
    Field::optional(
        "resource_field_ref",
        "resourceFieldRef",
        Object(RESOURCE_FIELD_REF),
        "Selects a resource of the container.",
    ),
    Field::optional(
        "secret_key_ref",
        "secretKeyRef",
        Object(KEY_REF),
        "Selects a key of a Secret in the pod's namespace.",
    ),
];

const ENV: &[Field] = &[
    Field::required("name", "name", One(Str), "Name of the environment variable."),
    Field::optional(
        "value",
        "value",
        One(Str),
        "The variable's value; `$(VAR_NAME)` references are expanded.",
    ),
    Field::optional(
        "value_from",
        "valueFrom",
        Object(ENV_SOURCE),
        "Source for the variable's value.",
    ),
];

const NAME_REF: &[Field] = &[
    Field::required("name", "name", One(Str), "Name of the referent."),
    Field::optional(
        "optional",
        "optional",
        One(Bool),
        "Whether the referent may be missing.",
    ),
];

const ENV_FROM: &[Field] = &[
    Field::optional(
        "config_map_ref",
        "configMapRef",
        Object(NAME_REF),
        "The ConfigMap to take variables from.",
    ),
    Field::optional("prefix", "prefix", One(Str), "A prefix for every variable name."),
    Field::optional(
        "secret_ref",
        "secretRef",
        Object(NAME_REF),
        "The Secret to take variables from.",
    ),
];

const CONTAINER_PORT: &[Field] = &[
    Field::required(
        "container_port",
        "containerPort",
        One(Int),
        "Port number to expose on the pod's IP address.",
    ),
    Field::optional(
        "host_ip",
        "hostIP",
        One(Str),
        "What host IP to bind the external port to.",
    ),
    Field::optional(
        "host_port",
        "hostPort",
        One(Int),
        "Port number to expose on the host.",
    ),
    Field::optional(
        "name",
        "name",
        One(Str),
        "A name for the port, unique in the pod, that services can refer to.",
    ),
    Field::defaulted(
        "protocol",
        "protocol",
        One(Str),
        "Protocol for the port: `TCP` (the default), `UDP` or `SCTP`.",
    ),
];

const RESOURCES: &[Field] = &[
    Field::defaulted(
        "limits",
        "limits",
        Map(Quantity),
        "The most compute resources allowed, e.g. `cpu = \"500m\"`.",
    ),
    Field::defaulted(
        "requests",
        "requests",
        Map(Quantity),
        "The least compute resources required.",
    ),
];

const SECCOMP_PROFILE: &[Field] = &[
    Field::optional(
        "localhost_profile",
        "localhostProfile",
        One(Str),
        "A profile on the node, for type `Localhost`.",
    ),
    Field::optional(
        "type",
        "type",
        One(Str),
        "`RuntimeDefault`, `Localhost` or `Unconfined`.",
    ),
];

const SECCOMP: Field = Field::optional(
    "seccomp_profile",
    "seccompProfile",
    Object(SECCOMP_PROFILE),
    "The seccomp options to use.",
);

const CAPABILITIES: &[Field] = &[
    Field::optional("add", "add", List(Str), "Added capabilities."),
    Field::optional("drop", "drop", List(Str), "Removed capabilities."),
];

const CONTAINER_SECURITY_CONTEXT: &[Field] = &[
    Field::optional(
        "allow_privilege_escalation",
        "allowPrivilegeEscalation",
        One(Bool),
        "Whether a process can gain more privileges than its parent process.",
    ),
    Field::optional(
        "capabilities",
        "capabilities",
        Object(CAPABILITIES),
        "The capabilities to add or drop.",
    ),
    Field::optional(
        "privileged",
        "privileged",
        One(Bool),
        "Run the container in privileged mode.",
    ),
    Field::optional(
        "read_only_root_filesystem",
        "readOnlyRootFilesystem",
        One(Bool),
        "Whether the container has a read-only root filesystem.",
    ),
    Field::optional(
        "run_as_group",
        "runAsGroup",
        One(IntString),
        "The GID to run the container process as.",
    ),
    Field::optional(
        "run_as_non_root",
        "runAsNonRoot",
        One(Bool),
        "Whether the container must run as a non-root user.",
    ),
    Field::optional(
        "run_as_user",
        "runAsUser",
        One(IntString),
        "The UID to run the container process as.",
    ),
    SECCOMP,
];

const VOLUME_MOUNT: &[Field] = &[
    Field::required(
        "mount_path",
        "mountPath",
        One(Str),
        "Path in the container at which to mount the volume.",
    ),
    Field::optional(
        "mount_propagation",
        "mountPropagation",
        One(Str),
        "How mounts propagate: `None`, `HostToContainer` or `Bidirectional`.",
    ),
    Field::required("name", "name", One(Str), "Name of the volume to mount."),
    Field::optional("read_only", "readOnly", One(Bool), "Mount read-only."),
    Field::optional(
        "sub_path",
        "subPath",
        One(Str),
        "Path within the volume to mount instead of its root.",
    ),
];

const LIFECYCLE: &[Field] = &[
    Field::optional(
        "post_start",
        "postStart",
        Object(HANDLER),
        "Runs right after the container is created.",
    ),
    Field::optional(
        "pre_stop",
        "preStop",
        Object(HANDLER),
        "Runs right before the container is terminated.",
    ),
];

const CONTAINER: &[Field] = &[
    Field::optional("args", "args", List(Str), "Arguments to the entrypoint."),
    Field::optional(
        "command",
        "command",
        List(Str),
        "Entrypoint array; the image's ENTRYPOINT when not set.",
    ),
    Field::optional(
        "env",
        "env",
        Array(ENV),
        "Environment variables to set in the container.",
    ),
    Field::optional(
        "env_from",
        "envFrom",
        Array(ENV_FROM),
        "Sources of environment variables.",
    ),
    Field::optional("image", "image", One(Str), "Container image name."),
    Field::defaulted(
        "image_pull_policy",
        "imagePullPolicy",
        One(Str),
        "`Always`, `Never` or `IfNotPresent`; `Always` for `:latest` images, else `IfNotPresent` by default.",
    ),
    Field::optional(
        "lifecycle",
        "lifecycle",
        Object(LIFECYCLE),
        "Actions on container lifecycle events.",
    ),
    Field::optional(
        "liveness_probe",
        "livenessProbe",
        Object(PROBE),
        "Restarts the container when it fails.",
    ),
    Field::required(
        "name",
        "name",
        One(Str),
        "Name of the container, unique in the pod.",
    ),
    Field::optional(
        "port",
        "ports",
        Array(CONTAINER_PORT),
        "Ports to expose from the container.",
    ),
    Field::optional(
        "readiness_probe",
        "readinessProbe",
        Object(PROBE),
        "Removes the pod from endpoints when it fails.",
    ),
    Field::optional(
        "resources",
        "resources",
        Object(RESOURCES),
        "Compute resources required by the container.",
    )
    .server_default("{}"),
    Field::optional(
        "security_context",
        "securityContext",
        Object(CONTAINER_SECURITY_CONTEXT),
        "Security options the container runs with.",
    ),
    Field::optional(
        "startup_probe",
        "startupProbe",
        Object(PROBE),
        "Holds other probes until the container has started.",
    ),
    Field::optional(
        "stdin",
        "stdin",
        One(Bool),
        "Whether to allocate a buffer for stdin.",
    ),
    Field::optional(
        "stdin_once",
        "stdinOnce",
        One(Bool),
        "Whether to close stdin after the first attach.",
    ),
    Field::defaulted(
        "termination_message_path",
        "terminationMessagePath",
        One(Str),
        "Path of the file the termination message is written to; `/dev/termination-log` by default.",
    ),
    Field::defaulted(
        "termination_message_policy",
        "terminationMessagePolicy",
        One(Str),
        "`File` (the default) or `FallbackToLogsOnError`.",
    ),
    Field::optional("tty", "tty", One(Bool), "Whether to allocate a TTY."),
    Field::optional(
        "volume_mount",
        "volumeMounts",
        Array(VOLUME_MOUNT),
        "Pod volumes to mount into the container.",
    ),
    Field::optional(
        "working_dir",
        "workingDir",
        One(Str),
        "The container's working directory.",
    ),
];

const KEY_TO_PATH: &[Field] = &[
    Field::optional("key", "key", One(Str), "The key to project."),
    Field::optional(
        "mode",
        "mode",
        One(FileMode),
        "Octal mode bits of the file, e.g. \"0644\".",
    ),
    Field::optional(
        "path",
        "path",
        One(Str),
        "Relative path of the file to map the key to.",
    ),
];

const CONFIG_MAP_VOLUME: &[Field] = &[
    Field::defaulted(
        "default_mode",
        "defaultMode",
        One(FileMode),
        "Octal mode bits of the files; \"0644\" by default.",
    ),
    Field::optional(
        "items",
        "items",
        Array(KEY_TO_PATH),
        "Keys to project, instead of all of them.",
    ),
    Field::optional("name", "name", One(Str), "Name of the ConfigMap."),
    Field::optional(
        "optional",
        "optional",
        One(Bool),
        "Whether the ConfigMap or its keys may be missing.",
    ),
];

const SECRET_VOLUME: &[Field] = &[
    Field::defaulted(
        "default_mode",
        "defaultMode",
        One(FileMode),
        "Octal mode bits of the files; \"0644\" by default.",
    ),
    Field::optional(
        "items",
        "items",
        Array(KEY_TO_PATH),
        "Keys to project, instead of all of them.",
    ),
    Field::optional(
        "optional",
        "optional",
        One(Bool),
        "Whether the Secret or its keys may be missing.",
    ),
    Field::optional("secret_name", "secretName", One(Str), "Name of the Secret."),
];

const EMPTY_DIR_VOLUME: &[Field] = &[
    Field::optional(
        "medium",
        "medium",
        One(Str),
        "Storage medium: \"\" (the node's default) or `Memory`.",
    ),
    Field::optional(
        "size_limit",
        "sizeLimit",
        One(Quantity),
        "Total amount of local storage the volume may use.",
    ),
];

const PVC_VOLUME: &[Field] = &[
    Field::required(
        "claim_name",
        "claimName",
        One(Str),
        "Name of a PersistentVolumeClaim in the pod's namespace.",
    ),
    Field::optional("read_only", "readOnly", One(Bool), "Mount read-only."),
];

const HOST_PATH_VOLUME: &[Field] = &[
    Field::optional("path", "path", One(Str), "Path of the directory on the host."),
    Field::defaulted(
        "type",
        "type",
        One(Str),
        "Type of the host path, e.g. `Directory`.",
    ),
];

const VOLUME: &[Field] = &[
    Field::optional(
        "config_map",
        "configMap",
        Object(CONFIG_MAP_VOLUME),
        "A ConfigMap's keys as files.",
    ),
    Field::optional(
        "empty_dir",
        "emptyDir",
        Object(EMPTY_DIR_VOLUME),
        "A temporary directory sharing the pod's lifetime.",
    ),
    Field::optional(
        "host_path",
        "hostPath",
        Object(HOST_PATH_VOLUME),
        "A file or directory on the host.",
    ),
    Field::required("name", "name", One(Str), "Name of the volume, unique in the pod."),
    Field::optional(
        "persistent_volume_claim",
        "persistentVolumeClaim",
        Object(PVC_VOLUME),
        "A PersistentVolumeClaim in the pod's namespace.",
    ),
    Field::optional(
        "secret",
        "secret",
        Object(SECRET_VOLUME),
        "A Secret's keys as files.",
    ),
];

const TOLERATION: &[Field] = &[
    Field::optional(
        "effect",
        "effect",
        One(Str),
        "Taint effect to match: `NoSchedule`, `PreferNoSchedule` or `NoExecute`.",
    ),
    Field::optional(
        "key",
        "key",
        One(Str),
        "Taint key the toleration applies to; empty matches all keys.",
    ),
    Field::optional(
        "operator",
        "operator",
        One(Str),
        "`Exists` or `Equal` (the default).",
    ),
    Field::optional(
        "toleration_seconds",
        "tolerationSeconds",
        One(IntString),
        "How long a `NoExecute` taint is tolerated.",
    ),
    Field::optional("value", "value", One(Str), "Taint value the toleration matches."),
];

const POD_SECURITY_CONTEXT: &[Field] = &[
    Field::optional(
        "fs_group",
        "fsGroup",
        One(IntString),
        "A group that owns the pod's volumes.",
    ),
    Field::optional(
        "fs_group_change_policy",
        "fsGroupChangePolicy",
        One(Str),
        "When to change volume ownership: `OnRootMismatch` or `Always`.",
    ),
    Field::optional(
        "run_as_group",
        "runAsGroup",
        One(IntString),
        "The GID to run the containers' processes as.",
    ),
    Field::optional(
        "run_as_non_root",
        "runAsNonRoot",
        One(Bool),
        "Whether the containers must run as a non-root user.",
    ),
    Field::optional(
        "run_as_user",
        "runAsUser",
        One(IntString),
        "The UID to run the containers' processes as.",
    ),
    SECCOMP,
    Field::optional(
        "supplemental_groups",
        "supplementalGroups",
        Set(Int),
        "Groups added to the containers' processes.",
    ),
];

const LOCAL_OBJECT_REF: &[Field] = &[Field::required("name", "name", One(Str), "Name of the referent.")];

const POD_SPEC: &[Field] = &[
    Field::optional(
        "active_deadline_seconds",
        "activeDeadlineSeconds",
        One(Int),
        "Seconds the pod may be active before the system fails it.",
    ),
    Field::optional(
        "automount_service_account_token",
        "automountServiceAccountToken",
        One(Bool),
        "Whether a service account token is mounted automatically.",
    ),
    Field::optional(
        "container",
        "containers",
        Array(CONTAINER),
        "The pod's containers.",
    ),
    Field::defaulted(
        "dns_policy",
        "dnsPolicy",
        One(Str),
        "DNS policy for the pod; `ClusterFirst` by default.",
    ),
    Field::optional(
        "enable_service_links",
        "enableServiceLinks",
        One(Bool),
        "Whether services' information is injected into the environment.",
    ),
    Field::optional("host_ipc", "hostIPC", One(Bool), "Use the host's IPC namespace."),
    Field::optional(
        "host_network",
        "hostNetwork",
        One(Bool),
        "Use the host's network namespace.",
    ),
    Field::optional("host_pid", "hostPID", One(Bool), "Use the host's PID namespace."),
    Field::optional("hostname", "hostname", One(Str), "The pod's hostname."),
    Field::optional(
        "image_pull_secrets",
        "imagePullSecrets",
        Array(LOCAL_OBJECT_REF),
        "Secrets in the namespace used to pull the images.",
    ),
    Field::optional(
        "init_container",
        "initContainers",
        Array(CONTAINER),
        "Containers run in order before the others.",
    ),
    Field::optional(
        "node_name",
        "nodeName",
        One(Str),
        "Schedule the pod onto this node.",
    ),
    Field::optional(
        "node_selector",
        "nodeSelector",
        Map(Str),
        "Node labels the pod's node must have.",
    ),
    Field::optional(
        "priority_class_name",
        "priorityClassName",
        One(Str),
        "The pod's priority class.",
    ),
    Field::defaulted(
        "restart_policy",
        "restartPolicy",
        One(Str),
        "`Always` (the default), `OnFailure` or `Never`.",
    ),
    Field::optional(
        "runtime_class_name",
        "runtimeClassName",
        One(Str),
        "The RuntimeClass to run the pod with.",
    ),
    Field::defaulted(
        "scheduler_name",
        "schedulerName",
        One(Str),
        "The scheduler that places the pod.",
    ),
    Field::optional(
        "security_context",
        "securityContext",
        Object(POD_SECURITY_CONTEXT),
        "Pod-level security attributes.",
    )
    .server_default("{}"),
    Field::defaulted(
        "service_account_name",
        "serviceAccountName",
        One(Str),
        "The ServiceAccount the pod runs as.",
    ),
    Field::optional(
        "share_process_namespace",
        "shareProcessNamespace",
        One(Bool),
        "Share one process namespace between the containers.",
    ),
    Field::optional("subdomain", "subdomain", One(Str), "The pod's subdomain."),
    Field::defaulted(
        "termination_grace_period_seconds",
        "terminationGracePeriodSeconds",
        One(Int),
        "Seconds the pod has to stop gracefully; 30 by default.",
    ),
    Field::optional(
        "toleration",
        "tolerations",
        Array(TOLERATION),
        "Taints the pod tolerates.",
    ),
    Field::optional(
        "volume",
        "volumes",
        Array(VOLUME),
        "Volumes the containers can mount.",
    ),
];

const TEMPLATE_METADATA: &[Field] = &[
    Field::optional("annotations", "annotations", Map(Str), "Annotations of the pods."),
    Field::optional(
        "labels",
        "labels",
        Map(Str),
        "Labels of the pods; they must match the selector.",
    ),
    Field::optional(
        "name",
        "name",
        One(Str),
        "Name of the pods (usually left to the controller).",
    ),
];

/// The fields of a pod template: `metadata` and `spec`.
pub const POD_TEMPLATE: &[Field] = &[
    Field::optional(
        "metadata",
        "metadata",
        Object(TEMPLATE_METADATA),
        "Metadata of the pods.",
    ),
    Field::required("spec", "spec", Object(POD_SPEC), "Specification of the pods."),
];
