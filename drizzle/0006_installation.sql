CREATE TABLE "installation" (
	"single" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "installation_single" CHECK ("installation"."single")
);
