/** What the run worker and the service both read of a `dp_backups` row. */

/** Volume name to the restic snapshot it was backed up in from this host's folder of it; null: the volume was empty. */
export type VolumeSnapshots = Record<string, string | null>;

export interface BackupRow {
    /** VolumeSnapshots as JSON; null when no volume was backed up from a folder of this host. */
    volume_snapshots?: unknown;
}

export function volumeSnapshotsOf(row: BackupRow): VolumeSnapshots {
    return typeof row.volume_snapshots === 'string' ? (JSON.parse(row.volume_snapshots) as VolumeSnapshots) : {};
}

/** The restic ids among the volume snapshots. */
export function snapshotIds(snapshots: VolumeSnapshots): string[] {
    return Object.values(snapshots).filter((snapshot): snapshot is string => snapshot !== null);
}
