import { useApi } from '../../api.ts';
import { Badge } from '../../components/Badge.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import type { App, AppFile } from './types.ts';

/** The app's files as they are on disk; secret values come masked for viewers (`GET /api/apps/{name}/files`). */
export function FilesTab(props: { app: App }) {
    const files = useApi<{ files: AppFile[] }>(`/api/apps/${encodeURIComponent(props.app.name)}/files`);
    if (!files.data) {
        return files.loading ? <Spinner label="Reading the files…" /> : <ErrorText error={files.error} />;
    }

    if (files.data.files.length === 0) {
        return <p>No file on disk yet: a deploy writes them.</p>;
    }

    return (
        <div class="files">
            {files.data.files.map((file) => (
                <details key={file.path} class="file-view" data-kind={file.kind}>
                    <summary>
                        <code>{file.path}</code> <Badge tone="neutral">{file.kind}</Badge>{' '}
                        {file.masked ? <Badge tone="info">values masked</Badge> : null}
                    </summary>
                    <pre tabIndex={0} aria-label={`Content of ${file.path}`}>
                        {file.content}
                    </pre>
                </details>
            ))}
        </div>
    );
}
