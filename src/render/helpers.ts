// The helper modules every template sees: each is an ES module with no imports (it is
// evaluated inside each template's own context, template-realm.ts), whose exports become
// globals of the template. The render process may read these files and nothing else of
// Quarry's. quote.js gives every template `q`, the quoting helpers of src/render/quote.ts.
export const TEMPLATE_HELPERS: URL[] = [new URL('./quote.js', import.meta.url)];
