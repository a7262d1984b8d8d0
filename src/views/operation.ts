import { iso } from "../http/time";
import type { OperationRecord } from "../stores/operations";

/** The Operation object of api.md: `ended_at` only once the operation has ended. */
export function renderOperation(op: OperationRecord) {
  return {
    id: op.id,
    type: op.type,
    status: op.status,
    created_at: iso(op.createdAt),
    ...(op.endedAt != null ? { ended_at: iso(op.endedAt) } : {}),
  };
}
