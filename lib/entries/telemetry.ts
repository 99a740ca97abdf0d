/**
 * `nestjs-model-context/telemetry`: observing the server. The audit and integration events
 * (`McpEvents`, `events` option) and the readiness indicator for `@nestjs/terminus`
 * (`McpHealthIndicator`). OpenTelemetry needs no import: the `telemetry` option turns it on.
 */
export {
  McpEvents,
  mcpEventName,
  type McpEvent,
  type McpEventBase,
  type McpEventType,
  type McpInteractionEvent,
  type McpListChangedEvent,
  type McpRequestEventFields,
  type McpRequestFinishedEvent,
  type McpRequestOutcome,
  type McpRequestStartedEvent,
  type McpResourceUpdatedEvent,
  type McpSessionClosedEvent,
  type McpSessionOpenedEvent,
} from '../telemetry/events.js';
export { McpHealthIndicator, type McpHealthDetails, type McpHealthResult } from '../health/mcp-health.indicator.js';
