// Repositories of road reports: the reports themselves (with the analysis' findings and proposed
// change), the road changes accepted from them or entered by admins, and the review log that
// records every decision (who, when, what, before and after).
import type { Db } from './sql.js';

export const REPORT_STATUSES = ['received', 'in_review', 'accepted', 'closed'] as const;
export type ReportStatus = (typeof REPORT_STATUSES)[number];

export interface NewReport {
  issueType: string;
  issueSubtype: string | null;
  description: string;
  roadName: string;
  location: [number, number];
  userId: number | null;
  apiKeyId: number | null;
  source: string | null;
  via: 'user' | 'partner';
  seenRoute: unknown;
}

export interface ReportRecord extends NewReport {
  id: number;
  status: ReportStatus;
  summary: string | null;
  city: string | null;
  /** What the analysis found (matched ways, classification, checks), as it wrote it. */
  analysis: Record<string, unknown> | null;
  /** The change the analysis proposes (a road change spec, see reports/changes.ts). */
  proposal: Record<string, unknown> | null;
  duplicateOf: number | null;
  createdAt: string;
  updatedAt: string;
}

export interface RoadChangeRecord {
  id: number;
  city: string;
  kind: string;
  spec: Record<string, unknown>;
  reportId: number | null;
  disruptionId: number | null;
  status: 'active' | 'lifted';
  flag: string | null;
  createdBy: string;
  createdAt: string;
  liftedBy: string | null;
  liftedAt: string | null;
}

export interface ReviewLogEntry {
  id: number;
  reportId: number | null;
  changeId: number | null;
  disruptionId: number | null;
  actor: string;
  action: string;
  before: unknown;
  after: unknown;
  at: string;
}

export interface QueueFilter {
  status?: ReportStatus;
  city?: string;
  issueType?: string;
  limit: number;
  offset: number;
}

export interface ReportRepository {
  /** Stores a report (committed when this returns). */
  create(r: NewReport): ReportRecord;
  byId(id: number): ReportRecord | undefined;
  /** The oldest reports still waiting for analysis (past the first `offset`). */
  received(limit: number, offset?: number): ReportRecord[];
  /** Open reports (received or in review) of a city, oldest first. */
  open(city: string): ReportRecord[];
  /**
   * Writes the analysis' outcome; `status` changes stamp `updated_at`. Only a report still
   * `received` takes it (another process's worker may have got there first, or a reviewer):
   * false when it was not.
   */
  analysed(
    id: number,
    r: {
      status: ReportStatus;
      summary: string;
      city: string | null;
      analysis: Record<string, unknown>;
      proposal: Record<string, unknown> | null;
      duplicateOf: number | null;
    },
  ): boolean;
  /** A reviewer's decision: the new status and summary. */
  decide(id: number, status: ReportStatus, summary: string): void;
  queue(f: QueueFilter): { reports: ReportRecord[]; total: number };
  log(e: Omit<ReviewLogEntry, 'id' | 'at'>): void;
  history(reportId: number): ReviewLogEntry[];
  createChange(
    c: Omit<RoadChangeRecord, 'id' | 'status' | 'createdAt' | 'liftedBy' | 'liftedAt'>,
  ): RoadChangeRecord;
  change(id: number): RoadChangeRecord | undefined;
  changes(f: { city?: string; status?: 'active' | 'lifted' }): RoadChangeRecord[];
  liftChange(id: number, by: string): boolean;
  flagChange(id: number, flag: string | null): void;
}

interface ReportRow {
  id: number;
  issue_type: string;
  issue_subtype: string | null;
  description: string;
  road_name: string;
  lon: number;
  lat: number;
  user_id: number | null;
  api_key_id: number | null;
  source: string | null;
  via: 'user' | 'partner';
  seen_route: string | null;
  status: ReportStatus;
  summary: string | null;
  city: string | null;
  analysis: string | null;
  proposal: string | null;
  duplicate_of: number | null;
  created_at: string;
  updated_at: string;
}

const parse = <T>(v: string | null): T | null => (v === null ? null : (JSON.parse(v) as T));

const toReport = (r: ReportRow): ReportRecord => ({
  id: r.id,
  issueType: r.issue_type,
  issueSubtype: r.issue_subtype,
  description: r.description,
  roadName: r.road_name,
  location: [r.lon, r.lat],
  userId: r.user_id,
  apiKeyId: r.api_key_id,
  source: r.source,
  via: r.via,
  seenRoute: parse(r.seen_route),
  status: r.status,
  summary: r.summary,
  city: r.city,
  analysis: parse(r.analysis),
  proposal: parse(r.proposal),
  duplicateOf: r.duplicate_of,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

interface ChangeRow {
  id: number;
  city: string;
  kind: string;
  spec: string;
  report_id: number | null;
  disruption_id: number | null;
  status: 'active' | 'lifted';
  flag: string | null;
  created_by: string;
  created_at: string;
  lifted_by: string | null;
  lifted_at: string | null;
}

const toChange = (r: ChangeRow): RoadChangeRecord => ({
  id: r.id,
  city: r.city,
  kind: r.kind,
  spec: JSON.parse(r.spec) as Record<string, unknown>,
  reportId: r.report_id,
  disruptionId: r.disruption_id,
  status: r.status,
  flag: r.flag,
  createdBy: r.created_by,
  createdAt: r.created_at,
  liftedBy: r.lifted_by,
  liftedAt: r.lifted_at,
});

const now = () => new Date().toISOString();

// Each filter may be null (any); the casts let PostgreSQL type a parameter only compared with NULL.
const QUEUE_FILTER = `(CAST(@status AS TEXT) IS NULL OR status = @status)
  AND (CAST(@city AS TEXT) IS NULL OR city = @city)
  AND (CAST(@issueType AS TEXT) IS NULL OR issue_type = @issueType)`;

export function sqlReports(db: Db): ReportRepository {
  const q = {
    insert: db.prepare(
      `INSERT INTO reports (issue_type, issue_subtype, description, road_name, lon, lat, user_id, api_key_id,
       source, via, seen_route, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'received', ?, ?)`,
    ),
    byId: db.prepare('SELECT * FROM reports WHERE id = ?'),
    received: db.prepare("SELECT * FROM reports WHERE status = 'received' ORDER BY id LIMIT ? OFFSET ?"),
    open: db.prepare(
      "SELECT * FROM reports WHERE city = ? AND status IN ('received', 'in_review') ORDER BY id",
    ),
    analysed: db.prepare(
      `UPDATE reports SET status = ?, summary = ?, city = ?, analysis = ?, proposal = ?, duplicate_of = ?,
       updated_at = CASE WHEN status = ? THEN updated_at ELSE ? END WHERE id = ? AND status = 'received'`,
    ),
    decide: db.prepare(
      'UPDATE reports SET status = ?, summary = ?, updated_at = CASE WHEN status = ? THEN updated_at ELSE ? END WHERE id = ?',
    ),
    queue: db.prepare(`SELECT * FROM reports WHERE ${QUEUE_FILTER} ORDER BY id LIMIT @limit OFFSET @offset`),
    count: db.prepare(`SELECT COUNT(*) FROM reports WHERE ${QUEUE_FILTER}`),
    log: db.prepare(
      `INSERT INTO review_log (report_id, change_id, disruption_id, actor, action, before, after, at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    history: db.prepare('SELECT * FROM review_log WHERE report_id = ? ORDER BY id'),
    changeInsert: db.prepare(
      `INSERT INTO road_changes (city, kind, spec, report_id, disruption_id, status, flag, created_by, created_at)
       VALUES (?, ?, ?, ?, ?, 'active', ?, ?, ?)`,
    ),
    change: db.prepare('SELECT * FROM road_changes WHERE id = ?'),
    changes: db.prepare(
      'SELECT * FROM road_changes WHERE (CAST(@city AS TEXT) IS NULL OR city = @city) AND (CAST(@status AS TEXT) IS NULL OR status = @status) ORDER BY id',
    ),
    lift: db.prepare(
      "UPDATE road_changes SET status = 'lifted', lifted_by = ?, lifted_at = ? WHERE id = ? AND status = 'active'",
    ),
    flag: db.prepare('UPDATE road_changes SET flag = ? WHERE id = ?'),
  };
  const json = (v: unknown) => (v === null || v === undefined ? null : JSON.stringify(v));
  const repo: ReportRepository = {
    create(r) {
      const at = now();
      const info = q.insert.run(
        r.issueType,
        r.issueSubtype,
        r.description,
        r.roadName,
        r.location[0],
        r.location[1],
        r.userId,
        r.apiKeyId,
        r.source,
        r.via,
        json(r.seenRoute),
        at,
        at,
      );
      return repo.byId(Number(info.lastInsertRowid)) as ReportRecord;
    },
    byId: (id) => {
      const r = q.byId.get(id) as ReportRow | undefined;
      return r && toReport(r);
    },
    received: (limit, offset = 0) => (q.received.all(limit, offset) as ReportRow[]).map(toReport),
    open: (city) => (q.open.all(city) as ReportRow[]).map(toReport),
    analysed(id, r) {
      const { changes } = q.analysed.run(
        r.status,
        r.summary,
        r.city,
        JSON.stringify(r.analysis),
        json(r.proposal),
        r.duplicateOf,
        r.status,
        now(),
        id,
      );
      return changes > 0;
    },
    decide(id, status, summary) {
      q.decide.run(status, summary, status, now(), id);
    },
    queue(f) {
      const args = { status: f.status ?? null, city: f.city ?? null, issueType: f.issueType ?? null };
      return {
        reports: (q.queue.all({ ...args, limit: f.limit, offset: f.offset }) as ReportRow[]).map(toReport),
        total: q.count.pluck().get(args) as number,
      };
    },
    log(e) {
      q.log.run(
        e.reportId,
        e.changeId,
        e.disruptionId,
        e.actor,
        e.action,
        json(e.before),
        json(e.after),
        now(),
      );
    },
    history: (reportId) =>
      (
        q.history.all(reportId) as {
          id: number;
          report_id: number | null;
          change_id: number | null;
          disruption_id: number | null;
          actor: string;
          action: string;
          before: string | null;
          after: string | null;
          at: string;
        }[]
      ).map((r) => ({
        id: r.id,
        reportId: r.report_id,
        changeId: r.change_id,
        disruptionId: r.disruption_id,
        actor: r.actor,
        action: r.action,
        before: parse(r.before),
        after: parse(r.after),
        at: r.at,
      })),
    createChange(c) {
      const info = q.changeInsert.run(
        c.city,
        c.kind,
        JSON.stringify(c.spec),
        c.reportId,
        c.disruptionId,
        c.flag,
        c.createdBy,
        now(),
      );
      return repo.change(Number(info.lastInsertRowid)) as RoadChangeRecord;
    },
    change: (id) => {
      const r = q.change.get(id) as ChangeRow | undefined;
      return r && toChange(r);
    },
    changes: (f) =>
      (q.changes.all({ city: f.city ?? null, status: f.status ?? null }) as ChangeRow[]).map(toChange),
    liftChange: (id, by) => q.lift.run(by, now(), id).changes === 1,
    flagChange(id, flag) {
      q.flag.run(flag, id);
    },
  };
  return repo;
}
