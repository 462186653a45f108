-- Every move of a deployment into DEPLOYED and out of it becomes a deployment_events row, whatever
-- made it (the control jobs, the API's undeploy, a model's deletion cascading): deployed hours are
-- the spans between them (docs/usage.md).
CREATE FUNCTION deployment_events_record() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF OLD.state = 'DEPLOYED' THEN
      INSERT INTO deployment_events (account_id, model_id, event) VALUES (OLD.account_id, OLD.model_id, 'undeployed');
    END IF;
    RETURN OLD;
  END IF;
  IF NEW.state = 'DEPLOYED' AND (TG_OP = 'INSERT' OR OLD.state <> 'DEPLOYED') THEN
    INSERT INTO deployment_events (account_id, model_id, event) VALUES (NEW.account_id, NEW.model_id, 'deployed');
  ELSIF TG_OP = 'UPDATE' AND OLD.state = 'DEPLOYED' AND NEW.state <> 'DEPLOYED' THEN
    INSERT INTO deployment_events (account_id, model_id, event) VALUES (NEW.account_id, NEW.model_id, 'undeployed');
  END IF;
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE TRIGGER deployments_record_events AFTER INSERT OR UPDATE OF state OR DELETE ON deployments
  FOR EACH ROW EXECUTE FUNCTION deployment_events_record();
--> statement-breakpoint
-- Models deployed before this migration: their span starts when they last became DEPLOYED.
INSERT INTO deployment_events (account_id, model_id, event, at)
  SELECT account_id, model_id, 'deployed', coalesce(deployed_at, updated_at) FROM deployments WHERE state = 'DEPLOYED';
