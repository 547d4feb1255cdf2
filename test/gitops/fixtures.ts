// Files the specs tests write.

/** "Billion laughs": `levels` levels of nine references to the level below. */
export function bomb(levels: number): string {
  let text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
  let prev = 'a';
  for (let i = 1; i <= levels; i++) {
    const name = `l${i}`;
    text += `${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]\n`;
    prev = name;
  }
  return text;
}

export const doc = (kind: string, name: string, spec: string): string =>
  `apiVersion: quarry/v1\nkind: ${kind}\nmetadata:\n  name: ${name}\nspec:\n${spec.replace(/^/gm, '  ')}\n`;

export const files = (...docs: string[]): string => docs.join('---\n');
