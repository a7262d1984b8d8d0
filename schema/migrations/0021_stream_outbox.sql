CREATE TABLE `stream_outbox` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`type` text NOT NULL,
	`ref` text,
	`payload` text,
	`created_at` integer NOT NULL
);
