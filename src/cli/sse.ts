// A small server-sent events reader over fetch: the frames of GET /events (`id:` and one `data:`
// line each, comments ignored), as they arrive.
export interface Frame {
  id: string;
  data: string;
}

export async function* frames(res: Response): AsyncGenerator<Frame> {
  if (!res.body) return;
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
      let id = '';
      const data: string[] = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith('id:')) id = line.slice(3).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length) yield { id, data: data.join('\n') };
    }
  }
}
