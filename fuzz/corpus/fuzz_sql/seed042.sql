begin
