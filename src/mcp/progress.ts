import type { AgentEvent } from '../agent/events.js';
import { estimateCostUsd } from '../agent/pricing.js';
import { formatCostUsd } from '../output/usage.js';
import type { EventSink } from '../run/ask.js';

/** How often a long call reports progress when the client sent a progress token. */
export const PROGRESS_INTERVAL_MS = 10_000;

/** Sends one `notifications/progress`; `progress` rises with every call, as the protocol requires. */
type SendProgress = (progress: number, message: string) => void;

/** A sink that keeps the state of a call and reports it every `intervalMs`; `stop()` ends the reports. */
interface ProgressReporter extends EventSink {
  stop(): void;
}

/** Reports the current tool call, the counts so far and the estimated cost, on a timer (not per event: chatty). */
export function progressReporter(send: SendProgress, intervalMs: number = PROGRESS_INTERVAL_MS): ProgressReporter {
  const started = Date.now();
  const running = new Map<string, string>();
  let requests = 0;
  let toolCalls = 0;
  let cost: number | null = 0;
  let ticks = 0;
  const timer = setInterval(() => {
    ticks++;
    const seconds = Math.round((Date.now() - started) / 1000);
    const now = running.size > 0 ? `running ${[...running.values()].join(', ')}` : requests > 0 ? 'waiting for the model' : 'starting';
    send(
      ticks,
      `${now} · ${requests} model request${requests === 1 ? '' : 's'} · ${toolCalls} tool call${toolCalls === 1 ? '' : 's'} · ${formatCostUsd(cost)} · ${seconds} s`,
    );
  }, intervalMs);
  timer.unref();
  return {
    handle(event: AgentEvent) {
      if (event.type === 'request_start') requests++;
      if (event.type === 'tool_start') running.set(event.id, `${event.name} ${event.display}`.slice(0, 200));
      if (event.type === 'tool_end') {
        running.delete(event.id);
        toolCalls++;
      }
      if (event.type === 'usage') {
        const one = estimateCostUsd(event.model, event.usage);
        cost = cost === null || one === null ? null : cost + one;
      }
    },
    stop() {
      clearInterval(timer);
    },
  };
}
