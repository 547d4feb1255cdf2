// GET /metrics: Prometheus' text format, for any signed-in user (Prometheus sends a read
// token as `Authorization: Bearer`). What the series are is src/metrics' business; this route
// only serves what it scrapes.
import { route, type AnyRoute } from '../route.js';

export interface MetricsSource {
  /** The exposition format's media type, with its version. */
  readonly contentType: string;
  scrape(): Promise<string>;
}

export function metricsRoutes(source: MetricsSource): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/metrics',
      summary: "Prometheus metrics (text exposition format): requests, loops, task runs, store writes, nodes and OSDs, Ceph's health",
      tags: ['metrics'],
      response: { description: 'the metrics', contentType: 'text/plain' },
      handler: async ({ ctx }) => {
        const text = await source.scrape();
        ctx.status = 200;
        ctx.type = source.contentType;
        ctx.body = text;
        return undefined;
      },
    }),
  ];
}
