// The helper modules every template sees: each is an ES module with no imports (it is
// evaluated inside each template's own context, template-realm.ts), whose exports become
// globals of the template. The render process may read these files and nothing else of
// Quarry's. Add a module here, e.g. new URL('./quote.js', import.meta.url), to give templates
// its functions.
export const TEMPLATE_HELPERS: URL[] = [];
