/**
 * The two ways a client's requests travel (`src/http/dispatch.ts`): the wire client, which carries them unless a
 * proxy is in force or a dispatcher is injected, and undici, here as an injected agent that counts what it
 * carried (so a suite run over it shows it was). An engine's suite runs once over each.
 */
import { Agent, type Dispatcher } from 'undici';

/** An undici agent that counts the requests it was handed. */
class CountingAgent extends Agent {
  requests = 0;

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    this.requests += 1;
    return super.dispatch(options, handler);
  }
}

/** One way through: the dispatcher to hand a client (none for the wire client), and the requests it counted. */
export interface DispatchPath {
  name: string;
  /** A fresh dispatcher for one test (undefined: the wire client carries the requests). */
  open(): Dispatcher | undefined;
  /** Closes what `open` made; resolves to the requests it carried (undefined for the wire client). */
  close(): Promise<number | undefined>;
}

function wirePath(): DispatchPath {
  return { name: 'the wire client', open: () => undefined, close: async () => undefined };
}

function undiciPath(): DispatchPath {
  let agent: CountingAgent | undefined;
  return {
    name: 'undici',
    open() {
      agent = new CountingAgent({ connections: 64, pipelining: 1 });
      return agent;
    },
    async close() {
      const carried = agent?.requests;
      await agent?.close();
      agent = undefined;
      return carried;
    },
  };
}

/** Both paths, for `describe.each`. */
export const DISPATCH_PATHS: readonly DispatchPath[] = [wirePath(), undiciPath()];
