// GET /openapi.json: the document of the whole route table, itself included.
import { buildOpenApi, type ApiInfo } from '../openapi.js';
import { route, type AnyRoute } from '../route.js';

/** `table` is read on the first request, when every area has been mounted. */
export function openApiRoutes(table: () => readonly AnyRoute[], info: ApiInfo): AnyRoute[] {
  let doc: Record<string, unknown> | undefined;
  return [
    route({
      method: 'GET',
      path: '/openapi.json',
      summary: 'This OpenAPI 3.1 document',
      tags: ['meta'],
      response: { description: 'the OpenAPI document', schema: { type: 'object', required: ['openapi', 'info', 'paths'] } },
      handler: () => (doc ??= buildOpenApi(table(), info)),
    }),
  ];
}
