// The messages between the service and its worker threads.

export interface WorkerData {
  dataDir: string;
}

export interface PingTask {
  kind: 'ping';
}

export type WorkerTask = PingTask;
