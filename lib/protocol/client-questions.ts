import { ToolError } from './errors.js';
import { InputRequiredSignal, type ServerRequestBroker } from './interaction.js';
import type { JsonObject } from './mcp-types.js';
import type { JsonRpcMessage } from './json-rpc.js';
import type { InputState, McpRequestProbe, McpRunHooks } from './call-facts.js';
import type { ProtocolEra } from './versions.js';

/** The call a question comes from, as far as asking goes. */
export interface QuestionSource {
  era: ProtocolEra;
  /** Set while the call runs as a task: questions go through the task. */
  task?: McpRunHooks;
  /** Modern era: answers carried by the request, and questions this round could not answer. */
  inputs: InputState;
  probe?: McpRequestProbe;
  /** Legacy era: sends server-to-client requests on the call's stream. */
  broker?: ServerRequestBroker;
  send(message: JsonRpcMessage): void;
  signal(): AbortSignal;
  timeoutMs: number;
  owner?: string;
}

/** One question: its key, method and params, and how an answer becomes a value. */
export interface Question<T> {
  key: string;
  method: string;
  params: JsonObject;
  /**
   * Turns a well-formed answer into the value, or undefined for a malformed one, which is asked
   * again (so a handler never sees it).
   */
  accept: (answer: unknown) => Promise<T | undefined>;
  /** Why an answer is malformed, for the error after the last try. */
  problem?: (answer: unknown) => string | undefined;
  beforeTask?: boolean;
}

/**
 * Asks the client (elicitation, sampling, roots) the way the call can: through its task, as a
 * multi-round-trip `input_required` round (2026-07-28), or as a server-to-client request on the
 * call's stream (legacy).
 */
export async function askClient<T>(
  from: QuestionSource,
  { key, method, params, accept, problem, beforeTask }: Question<T>,
): Promise<T> {
  const task = from.task;
  if (task && !(beforeTask && !task.created && from.era === 'modern')) {
    // Keys are unique over a task's lifetime: a malformed answer is asked again under a new one.
    let why: string | undefined;
    for (let attempt = 1; attempt <= 3; attempt++) {
      const answer = await task.input(attempt === 1 ? key : `${key}.${attempt}`, method, params);
      const value = await accept(answer);
      if (value !== undefined) return value;
      why = problem?.(answer);
    }
    throw malformedThrice(method, why);
  }
  if (from.era === 'modern') {
    // Own keys only: `inputResponses` is client JSON, and "toString" in {} is true.
    if (Object.hasOwn(from.inputs.answers, key)) {
      const value = await accept(from.inputs.answers[key]);
      if (value !== undefined) {
        from.probe?.interaction?.('answered', method, answerAction(from.inputs.answers[key]));
        return value;
      }
    }
    from.inputs.pending[key] = { method, params };
    from.probe?.interaction?.('requested', method);
    throw new InputRequiredSignal();
  }
  const broker = from.broker;
  if (!broker) {
    throw new ToolError(
      `This tool needs to send "${method}" to the client, which needs a stateful session: configure McpModule with sessions.mode "stateful".`,
    );
  }
  let why: string | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    from.probe?.interaction?.('requested', method);
    const answer = await broker.request((message) => from.send(message), method, params, {
      signal: from.signal(),
      timeoutMs: from.timeoutMs,
      owner: from.owner,
    });
    from.probe?.interaction?.('answered', method, answerAction(answer));
    const value = await accept(answer);
    if (value !== undefined) return value;
    why = problem?.(answer);
  }
  throw malformedThrice(method, why);
}

/** An elicitation answer's `action` (accept, decline, cancel), for observers; never its content. */
function answerAction(answer: unknown): string | undefined {
  const action =
    typeof answer === 'object' && answer !== null && !Array.isArray(answer) ? (answer as JsonObject).action : undefined;
  return action === 'accept' || action === 'decline' || action === 'cancel' ? action : undefined;
}

function malformedThrice(method: string, why: string | undefined): ToolError {
  return new ToolError(
    `The client answered "${method}" with a malformed result three times${why ? ` (${why})` : ''}. The client must answer with a result shaped as the MCP specification defines for "${method}".`,
  );
}
