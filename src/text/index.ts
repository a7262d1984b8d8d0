// Text processor (decisions §5). Pure logic: the caller looks up `mentionCandidates(text)` in one
// query, passes the users found to `processText`, checks `length` against the limit, and on
// create applies `withObjectId`.
export type { Entities, LinkEntity, MentionEntity, TagEntity, TextOptions, TextResult } from "./process";
export {
  MESSAGE_MAX_LENGTH,
  POST_MAX_LENGTH,
  codePointLength,
  escapeAttr,
  escapeHtml,
  mentionCandidates,
  normalizeTag,
  processText,
  withObjectId,
} from "./process";
export { LINK_SCHEMES } from "./links";
