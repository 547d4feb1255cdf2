// The /disks view of a replacement: which disk a disk replaced, whether the spec named it or an
// `all` selector's disk took over a destroyed id (then only its history says so).
import test from 'ava';
import { diskView } from '../../src/services/views.js';
import { diskDoc } from '../reconcilers/plan-fixtures.js';

const OLD_ID = '7d2e4f60-1a2b-4c3d-8e4f-5a6b7c8d9e0f';
const serialOf = (id: string) => (id === OLD_ID ? 'OLD-SER' : undefined);

test('disk view replaces: from the spec when it names the old disk', (t) => {
  t.is(diskView(diskDoc({ replaces: OLD_ID }), undefined, serialOf).replaces, 'OLD-SER');
});

test('disk view replaces: from the history when an all selector took over a destroyed id', (t) => {
  const history = [{ at: '2026-11-24T20:00:00.000Z', event: 'replaces' as const, osdId: 4, otherSerial: 'DEAD-SER', message: '' }];
  t.is(diskView(diskDoc({}, { history }), undefined, serialOf).replaces, 'DEAD-SER');
  t.is(diskView(diskDoc(), undefined, serialOf).replaces, null, 'a disk that replaced nothing');
});
