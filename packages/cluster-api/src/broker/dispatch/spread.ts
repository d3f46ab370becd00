/**
 * Spreading one Trigger's deliveries over the ready endpoints of its subscriber (a Service with
 * several pods), as Knative's dispatcher does through a Kubernetes Service: each delivery goes to
 * the endpoint with the fewest deliveries in flight, taking turns among equals, so a slow pod gets
 * less and two idle ones alternate. Connections are kept alive per endpoint (sender.ts), so the
 * choice is made per request here, not per connection as a service proxy would.
 */
export class Spread {
  private readonly inFlight = new Map<string, number>();
  private turn = 0;

  /** The endpoint for the next delivery, counted in flight until `release` is called. */
  acquire(endpoints: readonly string[]): { readonly url: string; release(): void } {
    let best = endpoints[0]!;
    let least = Infinity;
    const n = endpoints.length;
    for (let i = 0; i < n; i++) {
      const url = endpoints[(this.turn + i) % n]!;
      const count = this.inFlight.get(url) ?? 0;
      if (count < least) [best, least] = [url, count];
    }
    this.turn = (endpoints.indexOf(best) + 1) % n;
    this.inFlight.set(best, least + 1);
    let released = false;
    return {
      url: best,
      release: () => {
        if (released) return;
        released = true;
        const left = (this.inFlight.get(best) ?? 1) - 1;
        if (left > 0) this.inFlight.set(best, left);
        else this.inFlight.delete(best);
      },
    };
  }
}
