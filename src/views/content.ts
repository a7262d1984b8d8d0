/** Processed text as stored on a row: what `content` of posts, messages, users and clients shows. */
export interface StoredContent {
  text: string;
  html: string;
  entities: { links: unknown[]; mentions: unknown[]; tags: unknown[] };
}

/** Content for an object with no text yet: an empty itemscope span of the object's type. */
export function emptyContent(schemaBase: string, itemType: string): StoredContent {
  return {
    text: "",
    html: `<span itemscope itemtype="${schemaBase}/${itemType}"></span>`,
    entities: { links: [], mentions: [], tags: [] },
  };
}
