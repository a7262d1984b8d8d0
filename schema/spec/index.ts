/**
 * The one schema: every table, in the order the generated drizzle files list them. A new table is
 * declared in the resource file it belongs to and added to that file's list; then
 * `npm run db:generate` (docs/schema.md).
 */

import { accountsTables } from "./accounts";
import { channelsTables } from "./channels";
import type { TableSpec } from "./columns";
import { pollsFilesTables } from "./polls-files";
import { postsTables } from "./posts";
import { realtimeTables } from "./realtime";

export const tables: TableSpec[] = [...accountsTables, ...postsTables, ...channelsTables, ...pollsFilesTables, ...realtimeTables];
