// The dashboard's entry point (bundled by scripts/build-ui.ts into dist/ui).
import { render } from 'preact';
import { App } from './app.js';
import { Session } from './api.js';

const root = document.getElementById('app');
if (root) {
  root.replaceChildren();
  render(<App session={new Session()} />, root);
}
