/**
 * `nestjs-model-context/tasks`: the tasks pack's names, for apps that configure tasks in pieces,
 * bring their own task store, or check the extension a server advertises: the options
 * (`McpTasksOptions`, `McpBullmqTasksOptions`), the store contract and its in-memory default, and
 * the 2026-07-28 extension's identifier. Tools become tasks with `@Tool({ task })` from the root.
 */
export type { McpTasksOptions } from './mcp-tasks.js';
export type { McpBullmqTasksOptions } from './bullmq-task.queue.js';
export {
  InMemoryTaskStore,
  type McpTaskLimits,
  type McpTaskRecord,
  type McpTaskSignal,
  type McpTaskStatus,
  type McpTaskStore,
} from './task-store.js';
export { TASKS_EXTENSION } from './task-mode.js';
