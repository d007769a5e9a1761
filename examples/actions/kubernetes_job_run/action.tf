# Run the database migration after each new release of the app, from an inline Job template,
# and fail the apply with the failed pods' reasons and exit codes if it fails.
variable "release" {
  type = string
}

resource "kubernetes_config_map_v1" "release" {
  metadata {
    name      = "release"
    namespace = "shop"
  }
  data = {
    version = var.release
  }

  lifecycle {
    action_trigger {
      events  = [after_create, after_update]
      actions = [action.kubernetes_job_run.migrate]
    }
  }
}

action "kubernetes_job_run" "migrate" {
  config {
    namespace = "shop"
    job_template = {
      metadata = { generateName = "migrate-" }
      spec = {
        backoffLimit = 0
        template = {
          spec = {
            restartPolicy = "Never"
            containers = [{
              name    = "migrate"
              image   = "registry.example.com/shop/app:${var.release}"
              command = ["./migrate", "up"]
            }]
          }
        }
      }
    }
    ttl_seconds_after_finished = 86400
  }
}

# A run of a CronJob's template, as `kubectl create job --from=cronjob/nightly-report`:
#   terraform apply -invoke=action.kubernetes_job_run.report_now
action "kubernetes_job_run" "report_now" {
  config {
    namespace    = "shop"
    from_cronjob = "nightly-report"
  }
}
